"""The ledger's candidates remembered between ``summarize`` and the stage's receipt
(compaction/core/summary.py; docs/benchmarks.md, "Overheads"): a receipt read right after the
compaction gets what a fresh extraction gives, and a span that differs is extracted anew."""

from __future__ import annotations

from dataclasses import replace

import pytest

from compaction import compact, compacted_span, receipt_of
from compaction.core import summary
from compaction.core.messages import Message
from compaction.core.result import CompactionResult
from compaction.core.summary import span_identifiers
from compaction.core.turns import Turns
from tests.fakes import SMALL, FakeSummarizer, conversation

Compacted = tuple[list[Message], CompactionResult]


@pytest.fixture
def compacted() -> Compacted:
    messages = [replace(m, id=i) for i, m in enumerate(conversation(30), start=1)]
    result = compact(messages, SMALL, FakeSummarizer(), reason="manual")
    return messages, result


def test_the_receipt_right_after_a_compaction_equals_a_fresh_one(compacted: Compacted) -> None:
    messages, result = compacted
    span = compacted_span(messages, result)
    turns = Turns.of(span)
    # the core extracted this very span (its pruned messages lie inside the middle)
    assert summary._recalled(turns, SMALL.redact_secrets) is not None
    remembered = receipt_of(span, result, redact_secrets=SMALL.redact_secrets)
    summary._LAST = {}
    fresh = receipt_of(span, result, redact_secrets=SMALL.redact_secrets)
    assert remembered == fresh


def test_a_span_that_differs_is_extracted_anew(compacted: Compacted) -> None:
    messages, result = compacted
    span = compacted_span(messages, result)
    changed = [replace(span[0], content=span[0].content + " see /tmp/other_file.py"), *span[1:]]
    turns = Turns.of(changed)
    assert summary._recalled(turns, SMALL.redact_secrets) is None or not result.summarized
    found = span_identifiers(turns, SMALL.redact_secrets)
    assert "/tmp/other_file.py" in found["paths"]
    # and the same span with the other redaction switch is not the remembered one either
    assert summary._recalled(Turns.of(span), not SMALL.redact_secrets) is None


def test_what_is_returned_is_a_copy(compacted: Compacted) -> None:
    messages, result = compacted
    turns = Turns.of(compacted_span(messages, result))
    first = span_identifiers(turns, SMALL.redact_secrets)
    for items in first.values():
        items.append("tampered")
    assert all("tampered" not in v for v in span_identifiers(turns, SMALL.redact_secrets).values())
