"""Every shared real transcript, compacted with a fake summarizer (issue "1 of 5")."""

from __future__ import annotations

import json
import re

import pytest

from compaction import CompactionConfig, compact, estimate_messages_tokens
from compaction.messages import Message
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


def compacted(name: str) -> tuple[list[Message], object]:
    messages = load_transcript(name)
    # A window that puts each transcript well over the threshold, yet above its system prompt.
    system = estimate_messages_tokens(m for m in messages if m.role == "system")
    window = max(estimate_messages_tokens(messages) // 2, system * 100 // 70 + 50, 1_000)
    config = CompactionConfig(context_window=window, protect_first_n=1)
    return messages, compact(messages, config, FakeSummarizer(), reason="manual")


@pytest.mark.parametrize("name", TRANSCRIPT_NAMES)
def test_transcript_compacts_within_invariants(name: str) -> None:
    messages, result = compacted(name)
    check_invariants(messages, result)  # type: ignore[arg-type]
    assert result.summarized  # type: ignore[attr-defined]
    assert result.tokens_after < result.tokens_before  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", TRANSCRIPT_NAMES)
def test_ledger_keeps_identifiers_verbatim(name: str) -> None:
    messages, result = compacted(name)
    start, end = result.middle  # type: ignore[attr-defined]
    wanted = identifiers(messages[start:end])
    output = "\n".join(m.content for m in result.messages)  # type: ignore[attr-defined]
    kept = {i for i in wanted if i in output}
    recall = len(kept) / len(wanted) if wanted else 1.0
    missing = sorted(wanted - kept)[:10]
    assert recall >= 0.95, f"{name}: recall {recall:.1%} of {len(wanted)}; missing {missing}"
