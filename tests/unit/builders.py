"""Message builders for the unit tests of the pure core, one argument order throughout: what a
message or call says comes first, what ties it to others after it.

``tool("exit 0", "c1")`` is the result of call ``c1``; ``call({"command": "ls"}, "bash", "c2")``
a call with its JSON arguments; ``assistant("on it", "c1", call(...))`` an assistant message
calling ``c1`` (named ``bash``, arguments ``{}``) and another. ``convo("S U A:c1 T:c1")`` builds a
whole conversation from a spec.
"""

from __future__ import annotations

import json
from typing import Any

from compaction.core.messages import SUMMARY_MARKER, Message, ToolCall


def call(arguments: dict[str, Any] | str = "{}", name: str = "bash", id_: str = "c1") -> ToolCall:
    """``arguments`` as the model sends them: a JSON text, or an object encoded as one."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return ToolCall(id=id_, name=name, arguments=text)


def system(content: str = "You are a helpful agent.", **kw: Any) -> Message:
    return Message(role="system", content=content, **kw)


def user(content: str = "hello", **kw: Any) -> Message:
    return Message(role="user", content=content, **kw)


def assistant(content: str = "", *calls: str | ToolCall, **kw: Any) -> Message:
    """``calls`` are ``ToolCall``s, or ids of calls with the defaults of ``call``."""
    tool_calls = [c if isinstance(c, ToolCall) else call(id_=c) for c in calls]
    return Message(role="assistant", content=content, tool_calls=tool_calls, **kw)


def tool(content: str = "ok", call_id: str = "c1", **kw: Any) -> Message:
    return Message(role="tool", content=content, tool_call_id=call_id, **kw)


def summary(text: str = "earlier turns were compacted") -> Message:
    """A compaction summary message as the engine writes it (role user, fixed marker) and the
    store loads it (flagged: the marker alone makes no summary)."""
    return Message(role="user", content=f"{SUMMARY_MARKER} {text}", is_summary=True)


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
            out.append(assistant(text, *(arg.split(",") if arg else ())))
        elif kind == "T":
            out.append(tool(text, arg))
        elif kind == "Z":
            out.append(summary(text))
        else:
            raise ValueError(f"unknown spec token {token!r}")
    return out
