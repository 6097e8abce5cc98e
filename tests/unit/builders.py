"""Small message builders shared by the unit tests of the pure core.

Import as ``from tests.unit.builders import ...`` (``pythonpath = ["."]`` in pyproject).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from compaction.messages import SUMMARY_MARKER, Message, ToolCall


def call(id_: str, name: str = "run", arguments: str = "{}") -> ToolCall:
    return ToolCall(id=id_, name=name, arguments=arguments)


def system(content: str = "You are a helpful agent.", **kw: Any) -> Message:
    return Message(role="system", content=content, **kw)


def user(content: str = "hello", **kw: Any) -> Message:
    return Message(role="user", content=content, **kw)


def assistant(content: str = "", calls: Iterable[str | ToolCall] = (), **kw: Any) -> Message:
    """An assistant message; ``calls`` are ids (name "run", arguments "{}") or ``ToolCall``s."""
    tool_calls = [c if isinstance(c, ToolCall) else call(c) for c in calls]
    return Message(role="assistant", content=content, tool_calls=tool_calls, **kw)


def tool(call_id: str, content: str = "ok", **kw: Any) -> Message:
    return Message(role="tool", content=content, tool_call_id=call_id, **kw)


def summary(text: str = "earlier turns were compacted") -> Message:
    """A compaction summary message as the engine writes it (role user, fixed marker)."""
    return Message(role="user", content=f"{SUMMARY_MARKER} {text}")


def convo(spec: str) -> list[Message]:
    """A conversation from a compact spec, one token per message, separated by spaces:

    ``S`` system, ``U`` user, ``A`` assistant text, ``A:c1,c2`` assistant calling c1 and c2,
    ``T:c1`` the result of c1, ``Z`` a compaction summary. Contents name their index
    (``"m3"``) so a failing comparison shows which message moved.
    """
    out: list[Message] = []
    for index, token in enumerate(spec.split()):
        kind, _, arg = token.partition(":")
        text = f"m{index}"
        if kind == "S":
            out.append(system(text))
        elif kind == "U":
            out.append(user(text))
        elif kind == "A":
            out.append(assistant(text, arg.split(",") if arg else ()))
        elif kind == "T":
            out.append(tool(arg, text))
        elif kind == "Z":
            out.append(summary(text))
        else:
            raise ValueError(f"unknown spec token {token!r}")
    return out
