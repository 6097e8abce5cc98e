"""The receipt against an independent check, on every shared transcript (issue 23, "Must show"):
each stage's compacted span re-extracted with the ledger's extractor, and each identifier looked
for in the result's text directly (``identifier in final_text``); the receipt's kept and missing
sets, and its verbatim user messages, must be the same."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.engine import InstantSummarizer
from benchmarks.receipts import DEFAULT_DIRS, load, transcripts
from benchmarks.survival import config_for, json_strings
from compaction import compact_staged, compacted_span, receipt_of
from compaction.core.engine import CompactionResult
from compaction.core.ledger import KINDS
from compaction.core.messages import Message, own_words
from compaction.core.receipt import MAX_LISTED
from compaction.core.summary import span_identifiers
from compaction.core.turns import Turns

PATHS = transcripts(DEFAULT_DIRS)


def final_text(result: CompactionResult) -> str:
    """Everything the model reads after the stage: each message's content, and each call's
    arguments as sent and as decoded."""
    parts: list[str] = []
    for message in result.messages:
        parts.append(message.content)
        for call in message.tool_calls:
            parts.append(call.arguments)
            with contextlib.suppress(ValueError):
                parts.extend(json_strings(json.loads(call.arguments)))
    return "\n".join(parts)


def stages(path: Path) -> Iterator[tuple[list[Message], CompactionResult]]:
    messages = load(path)
    staged = compact_staged(messages, config_for(messages), InstantSummarizer(), reason="manual")
    before = messages
    for result in (staged.history, staged.loop):
        if result is not None:
            yield before, result
            before = result.messages


def test_the_shared_transcripts_are_there() -> None:
    assert len(PATHS) >= 9


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_receipt_equals_an_independent_check(path: Path) -> None:
    for before, result in stages(path):
        span = compacted_span(before, result)
        text = final_text(result)
        receipt = receipt_of(span, result)
        found = span_identifiers(Turns.of(span), True)
        for kind in KINDS:
            missing = [i for i in found.get(kind, []) if i not in text]
            assert receipt.totals[kind] == len(found.get(kind, [])), kind
            assert receipt.missing_counts[kind] == len(missing), (kind, missing[:5])
            assert list(receipt.missing[kind]) == missing[:MAX_LISTED], kind
        # the user's own words: injected texts (messages.INJECTED_PREFIXES) are not counted
        users = [words for m in span if (words := own_words(m))]
        assert receipt.user_total == len(users)
        assert receipt.verbatim == sum(1 for u in users if u in text)
