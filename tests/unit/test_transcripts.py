"""Every shared real transcript, compacted with a fake summarizer (issue "1 of 5")."""

from __future__ import annotations

import json
import re

import pytest

from compaction import (
    CompactionConfig,
    compact,
    compact_loop,
    estimate_messages_tokens,
    first_stage,
)
from compaction.engine import CompactionResult
from compaction.messages import Message
from compaction.redact import redact
from compaction.serialize import serialize
from tests.fakes import TRANSCRIPT_NAMES, FakeSummarizer, load_transcript
from tests.invariants import check_invariants

# Defined here, independently of compaction.ledger, so the recall figure is not circular.
_PATH = re.compile(r"(?:~|\.{1,2})?/?(?:[\w.-]+/)+[\w-]+\.[A-Za-z]{1,5}\b")
_ERROR = re.compile(r"Traceback \(most recent call last\)|\b\w+(?:Error|Exception): |\bFAILED\b")


def identifiers(middle: list[Message]) -> set[str]:
    found: set[str] = set()
    for message in middle:
        text = message.source_text
        found.update(p for p in _PATH.findall(text) if "://" not in p)
        if message.role == "tool":
            found.update(
                line.strip()
                for line in text.splitlines()
                if _ERROR.search(line) and len(line.strip()) <= 300
            )
        for call in message.tool_calls:
            try:
                command = json.loads(call.arguments).get("command")
            except (ValueError, AttributeError):
                continue
            if isinstance(command, str) and command.strip():
                first = command.strip().split("\n", 1)[0]
                if len(first) <= 300:
                    found.add(first)
    return found


def config_for(messages: list[Message]) -> CompactionConfig:
    # A window that puts each transcript well over the threshold, yet above its system prompt.
    system = estimate_messages_tokens(m for m in messages if m.role == "system")
    window = max(estimate_messages_tokens(messages) // 2, system * 100 // 70 + 50, 1_000)
    return CompactionConfig(context_window=window, protect_first_n=1)


def compacted(
    name: str, summarizer: FakeSummarizer | None = None
) -> tuple[list[Message], CompactionResult]:
    """The transcript and its first stage's result: the history's, or the loop's for an agent
    whose whole run follows one request (compaction/staged.py)."""
    messages = load_transcript(name)
    config = config_for(messages)
    summarizer = summarizer or FakeSummarizer()
    if first_stage(messages, config) == "loop":
        return messages, compact_loop(messages, config, summarizer, reason="manual")
    return messages, compact(messages, config, summarizer, reason="manual")


@pytest.mark.parametrize("name", TRANSCRIPT_NAMES)
def test_transcript_compacts_within_invariants(name: str) -> None:
    messages, result = compacted(name)
    check_invariants(messages, result)
    assert result.summarized
    assert result.tokens_after < result.tokens_before


@pytest.mark.parametrize("name", TRANSCRIPT_NAMES)
def test_ledger_keeps_identifiers_verbatim(name: str) -> None:
    messages, result = compacted(name)
    start, end = result.middle
    wanted = identifiers(messages[start:end])
    output = "\n".join(m.content for m in result.messages)
    kept = {i for i in wanted if i in output}
    recall = len(kept) / len(wanted) if wanted else 1.0
    missing = sorted(wanted - kept)[:10]
    assert recall >= 0.95, f"{name}: recall {recall:.1%} of {len(wanted)}; missing {missing}"


@pytest.mark.parametrize("name", TRANSCRIPT_NAMES)
def test_summarizer_reads_each_turn_redacted_as_alone(name: str) -> None:
    # The engine chooses the redaction rules once, on the middle's distinct words: what the
    # summarizer reads must be what redacting each serialized turn on its own gives.
    summarizer = FakeSummarizer()
    messages, result = compacted(name, summarizer)
    config = config_for(messages)
    start, end = result.middle
    turns = [m for m in messages[start:end] if not m.is_summary]
    entries = serialize(turns, config.serialize_head_chars, config.serialize_tail_chars)
    expected = "\n\n".join(redact(entry) for entry in entries)
    assert "\n\n".join(r.serialized for r in summarizer.requests) == expected
