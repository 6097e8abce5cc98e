"""Helpers of the offline summarizer's tests (``test_offline*.py``): a request, a summary of
some messages, the items under one heading, and a small coding conversation."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from compaction.core.messages import Message, ToolCall
from compaction.core.offline import OfflineSummarizer
from compaction.core.prompts import HEADINGS
from compaction.core.summary import SummaryRequest
from tests.unit.builders import assistant, tool, user


def bash(command: str, id_: str = "c1") -> ToolCall:
    return ToolCall(id=id_, name="bash", arguments=json.dumps({"command": command}))


def request(
    messages: Sequence[Message],
    *,
    head: Sequence[Message] = (),
    previous: str | None = None,
    budget: int = 4000,
    language: str = "en",
    focus: str | None = None,
) -> SummaryRequest:
    return SummaryRequest(
        prompt="(prompt unused by the offline summarizer)",
        serialized="(serialized unused)",
        previous_summary=previous,
        budget_tokens=budget,
        language=language,  # type: ignore[arg-type]
        focus=focus,
        chunk_index=0,
        chunk_count=1,
        messages=tuple(messages),
        head=tuple(head),
    )


def summarize(messages: Sequence[Message], **kwargs: Any) -> str:
    return OfflineSummarizer().summarize(request(messages, **kwargs))


EN, ZH = HEADINGS["en"], HEADINGS["zh"]
NONE = {"en": "(none recorded)", "zh": "（无记录）"}


def section(text: str, heading: str) -> list[str]:
    """The ``- item`` lines under ``heading`` (until the next heading), without the dash."""
    lines = text.splitlines()
    start = lines.index(heading) + 1
    items: list[str] = []
    for line in lines[start:]:
        if line.startswith("#"):
            break
        if line.startswith("- "):
            items.append(line[2:])
    return items


def conversation() -> list[Message]:
    return [
        user(
            "Fix the failing parser tests in src/parser.py. "
            "You must not change the public API. The weather is nice today."
        ),
        assistant("I will run the tests first.", bash("pytest tests/test_parser.py -x", "c1")),
        tool("FAILED tests/test_parser.py::test_empty - ValueError: empty input\n1 failed", "c1"),
        assistant("I decided to add a guard clause because the empty case is common."),
        assistant("", bash("git diff --stat", "c2")),
        tool(" src/parser.py | 3 ++-\n 1 file changed", "c2"),
        user("Now also update the docs in docs/index.md please."),
        assistant("Updating docs/index.md next."),
    ]
