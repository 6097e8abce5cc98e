"""Provider rules a message list must satisfy to be sent (docs/architecture.md, "The algorithm",
phase 4).

OpenAI: every tool result follows the assistant message whose call it answers (only other
results in between), every call is answered before the next non-tool message, call ids unique.
Anthropic, in addition: system messages only at the start, and the first other message is the
user's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from compaction.core.errors import InvalidRequest
from compaction.core.messages import Message

Provider = Literal["openai", "anthropic", "both"]


def problems(messages: Sequence[Message], provider: Provider = "both") -> list[str]:
    """Every rule broken, as ``"message N: ..."`` lines; empty when the list is valid."""
    found: list[str] = []
    open_calls: dict[str, int] = {}  # unanswered ids of the current assistant turn
    seen_ids: set[str] = set()
    for index, message in enumerate(messages):
        if message.role == "tool":
            if message.tool_call_id not in open_calls:
                found.append(
                    f"message {index}: tool result {message.tool_call_id!r} answers "
                    "no call of the assistant turn before it"
                )
            else:
                del open_calls[message.tool_call_id]
            continue
        if open_calls:  # most turns leave none open: no new dict per message
            found.extend(_unanswered(open_calls))
            open_calls = {}
        for call in message.tool_calls:
            if call.id in seen_ids:
                found.append(f"message {index}: duplicate tool call id {call.id!r}")
            seen_ids.add(call.id)
            open_calls[call.id] = index
    found.extend(_unanswered(open_calls))
    if provider in ("anthropic", "both"):
        found.extend(_anthropic(messages))
    return found


def _unanswered(open_calls: dict[str, int]) -> list[str]:
    return [
        f"message {at}: tool call {call_id!r} has no result" for call_id, at in open_calls.items()
    ]


def _anthropic(messages: Sequence[Message]) -> list[str]:
    found: list[str] = []
    first_other = next((i for i, m in enumerate(messages) if m.role != "system"), None)
    if first_other is None:
        return found
    if messages[first_other].role != "user":
        found.append(f"message {first_other}: the first non-system message must be the user's")
    for index in range(first_other, len(messages)):
        if messages[index].role == "system":
            found.append(f"message {index}: a system message after the conversation started")
    return found


def ensure_valid(messages: Sequence[Message], provider: Provider = "both") -> None:
    """Raise ``InvalidRequest`` naming the first broken rule."""
    broken = problems(messages, provider)
    if broken:
        more = f" (and {len(broken) - 1} more)" if len(broken) > 1 else ""
        raise InvalidRequest(f"invalid conversation: {broken[0]}{more}")
