"""Pins (docs/architecture.md, "Pins"; docs/algorithm.md, "Pins"): the messages a user pinned,
which no stage summarizes or prunes.

A pin holds a whole step: a pinned assistant message keeps the results of its tool calls, a
pinned tool result keeps the assistant message that called it (and so that call's other
results), since neither provider accepts one without the other. ``pinned_indices`` is that
closure, the one rule every stage and figure reads: pruning skips these messages, a stage's
middle keeps them verbatim, in order, before its summary (``kept_in_middle``), and the
pinned tokens are what the console's breakdown shows and what ``check_pins`` bounds.
"""

from __future__ import annotations

from collections.abc import Sequence

from compaction.core.errors import PinsOverThreshold
from compaction.core.messages import Message


def pinned_indices(messages: Sequence[Message]) -> frozenset[int]:
    """Indices of the pinned messages and of the steps they belong to; summaries never count
    (a summary cannot be pinned: the store refuses it)."""
    if not any(m.pinned for m in messages):  # the common case, in one pass
        return frozenset()
    out: set[int] = set()
    index, count = 0, len(messages)
    while index < count:
        end = index + 1
        if messages[index].tool_calls:
            while end < count and messages[end].role == "tool":
                end += 1
        if any(m.pinned and not m.is_summary for m in messages[index:end]):
            out.update(range(index, end))
        index = end
    return frozenset(out)


def kept_and_summarized(middle: Sequence[Message]) -> tuple[list[Message], list[Message]]:
    """A stage's middle split into what stays verbatim (the pinned steps, in order) and what
    its summary replaces. Boundaries never cut a step, so the closure of the slice is the
    closure of the whole list."""
    pinned = pinned_indices(middle)
    if not pinned:
        return [], list(middle)
    kept = [m for i, m in enumerate(middle) if i in pinned]
    return kept, [m for i, m in enumerate(middle) if i not in pinned]


def kept_in_middle(head: Sequence[Message], middle: Sequence[Message]) -> frozenset[int]:
    """Indices of ``middle`` kept verbatim between ``head`` and the summary: its pinned steps,
    and, when the head holds only system messages and the first pinned message is not the
    user's, the user message before it (Anthropic wants the user's first; the store keeps
    exactly these rows: ``CompactionResult.kept_ids``)."""
    pinned = pinned_indices(middle)
    if not pinned:
        return pinned
    first = min(pinned)
    if middle[first].role == "user" or any(m.role != "system" for m in head):
        return pinned
    lead = next((i for i in range(first) if _request(middle[i])), None)
    return pinned if lead is None else pinned | {lead}


def _request(message: Message) -> bool:
    return message.role == "user" and not message.is_summary


def pinned_tokens(messages: Sequence[Message], counts: Sequence[int]) -> int:
    """The tokens the pins hold (their steps included): the status line's breakdown."""
    return sum(counts[i] for i in pinned_indices(messages))


def check_pins(messages: Sequence[Message], counts: Sequence[int], threshold: int) -> None:
    """``PinsOverThreshold`` when the pinned steps with the leading system messages (the system
    prompt) reach ``threshold``: no compaction could bring such a session under it."""
    leading = next((i for i, m in enumerate(messages) if m.role != "system"), len(messages))
    system = sum(counts[:leading])
    pinned = sum(counts[i] for i in pinned_indices(messages) if i >= leading)
    if system + pinned >= threshold:
        raise PinsOverThreshold(
            f"the pinned messages (~{pinned:,} tokens) with the system prompt "
            f"(~{system:,}) would reach this session's threshold of {threshold:,} tokens: "
            "unpin some first"
        )
