"""Every shared real transcript, compacted with a fake summarizer (issue "1 of 5")."""

from __future__ import annotations

import pytest

from benchmarks.survival import GOAL, compacted, config_for, survival
from compaction.core.engine import CompactionResult
from compaction.core.messages import Message
from compaction.core.redact import redact
from compaction.core.serialize import serialize
from tests.fakes import TRANSCRIPT_NAMES, FakeSummarizer, load_transcript
from tests.invariants import check_invariants


def first_stage_of(
    name: str, summarizer: FakeSummarizer | None = None
) -> tuple[list[Message], CompactionResult]:
    """The transcript and its first stage's result (the history's, or the loop's)."""
    messages = load_transcript(name)
    return messages, compacted(messages, config_for(messages), summarizer or FakeSummarizer())


@pytest.mark.parametrize("name", TRANSCRIPT_NAMES)
def test_transcript_compacts_within_invariants(name: str) -> None:
    messages, result = first_stage_of(name)
    check_invariants(messages, result)
    assert result.summarized
    assert result.tokens_after < result.tokens_before


@pytest.mark.parametrize("name", TRANSCRIPT_NAMES)
def test_ledger_keeps_every_kind_of_identifier_verbatim(name: str) -> None:
    # Paths, commands, errors, URLs and ids of the compacted span, by the reference extractor of
    # benchmarks/survival.py (independent of compaction.core.identifiers), with a summarizer that
    # writes nothing useful: the ledger alone keeps them.
    for row in survival(name):
        assert row.share >= GOAL, (
            f"{name} {row.kind}: {row.kept}/{row.found}; missing {list(row.missing[:10])}"
        )


@pytest.mark.parametrize("name", TRANSCRIPT_NAMES)
def test_summarizer_reads_each_turn_redacted_as_alone(name: str) -> None:
    # The engine chooses the redaction rules once, on the middle's distinct words: what the
    # summarizer reads must be what redacting each serialized turn on its own gives.
    summarizer = FakeSummarizer()
    messages, result = first_stage_of(name, summarizer)
    config = config_for(messages)
    start, end = result.middle
    turns = [m for m in messages[start:end] if not m.is_summary]
    entries = serialize(turns, config.serialize_head_chars, config.serialize_tail_chars)
    expected = "\n\n".join(redact(entry) for entry in entries)
    assert "\n\n".join(r.serialized for r in summarizer.requests) == expected
