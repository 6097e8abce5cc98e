"""Messages built from their text first (``tool("output")``), for the tests that read what
messages say: the ledger and the extractive summarizer. ``builders.py`` builds them by shape."""

from __future__ import annotations

import json
from typing import Any

from compaction.messages import Message, ToolCall


def system(text: str) -> Message:
    return Message(role="system", content=text)


def user(text: str) -> Message:
    return Message(role="user", content=text)


def assistant(text: str = "", *calls: ToolCall) -> Message:
    return Message(role="assistant", content=text, tool_calls=list(calls))


def tool(text: str, call_id: str = "c1", original: str | None = None) -> Message:
    return Message(role="tool", content=text, tool_call_id=call_id, original_content=original)


def call(arguments: dict[str, Any] | str, name: str = "bash", id_: str = "c1") -> ToolCall:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return ToolCall(id=id_, name=name, arguments=text)
