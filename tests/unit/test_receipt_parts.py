"""The receipt takes the span's identifiers in two parts, as the ledger does (the middle's, then
the pruned outputs' outside it), so that both are the extractions ``summarize`` remembered
(compaction/core/receipt.py; docs/benchmarks.md, "Overheads")."""

from __future__ import annotations

from compaction import compact, compacted_span, receipt_of
from compaction.core import summary
from compaction.core.config import CompactionConfig
from compaction.core.turns import Turns
from tests.fakes import FakeSummarizer, load_transcript


def test_both_parts_are_remembered_and_the_receipt_equals_a_fresh_one() -> None:
    # deerflow_3823e443 under this window prunes tool outputs in the kept tail (as in
    # tests/unit/test_survival_ledger.py): the span is the middle and those outputs
    messages = load_transcript("deerflow_3823e443")
    config = CompactionConfig(context_window=20_000, protect_first_n=1)
    result = compact(messages, config, FakeSummarizer(), reason="manual")
    start, end = result.middle
    span = compacted_span(messages, result)
    middle, pruned = span[: end - start], span[end - start :]
    assert middle and pruned
    assert summary._recalled(Turns.of(pruned), config.redact_secrets) is not None
    assert summary._recalled(Turns.of(middle), config.redact_secrets) is not None
    remembered = receipt_of(span, result, redact_secrets=config.redact_secrets)
    summary._LAST = {}
    fresh = receipt_of(span, result, redact_secrets=config.redact_secrets)
    assert remembered == fresh
    # every candidate the ledger listed is counted: the pruned outputs' URLs are kept
    assert remembered.totals["urls"] > 100
