"""The four segments of an agent's context (docs/architecture.md, "The algorithm"), recognised
from the messages themselves:

- ``system``: the leading system messages (the system prompt);
- ``history``: everything before the latest real user request (earlier turns, an earlier
  compaction summary, a system message in the middle);
- ``loop``: the assistant and tool messages after that request (the current task's tool calls
  and results, and the agent's replies), and a summary there (the loop's execution summary,
  ``compaction.core.loop``);
- ``state``: the latest real user request itself, and any later message that is neither
  assistant nor tool (a user or system note the gateway appends with the current state).

Without a real user message, everything after the system prompt is history. A gateway may tag
a stored message explicitly (its metadata ``{"segment": ...}``); a valid tag wins.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, cast, get_args

from compaction.core.messages import Message, last_real_user_index

Segment = Literal["system", "history", "loop", "state"]
SEGMENTS: tuple[Segment, ...] = get_args(Segment)


def tag_of(metadata: object) -> Segment | None:
    """The segment a stored row's metadata names, if it names a valid one."""
    if not isinstance(metadata, dict):
        return None
    tag = metadata.get("segment")
    return cast(Segment, tag) if tag in SEGMENTS else None


def segment_of(
    messages: Sequence[Message], tags: Sequence[Segment | None] | None = None
) -> list[Segment]:
    """Each message's segment; ``tags[i]``, when given and not ``None``, wins for message i."""
    leading = next((i for i, m in enumerate(messages) if m.role != "system"), len(messages))
    last_user = last_real_user_index(messages)
    found: list[Segment] = []
    for index, message in enumerate(messages):
        tag = tags[index] if tags is not None and index < len(tags) else None
        found.append(tag or _recognised(index, message, leading, last_user))
    return found


def _recognised(index: int, message: Message, leading: int, last_user: int | None) -> Segment:
    if index < leading:
        return "system"
    if last_user is None or index < last_user:
        return "history"
    if index > last_user and (message.role in ("assistant", "tool") or message.is_summary):
        return "loop"
    return "state"


def tokens_by_segment(
    messages: Sequence[Message],
    token_counts: Sequence[int],
    tags: Sequence[Segment | None] | None = None,
) -> dict[str, int]:
    """Tokens per segment, every segment present (0 when empty)."""
    totals: dict[str, int] = dict.fromkeys(SEGMENTS, 0)
    for segment, tokens in zip(segment_of(messages, tags), token_counts, strict=True):
        totals[segment] += tokens
    return totals
