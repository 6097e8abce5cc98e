"""Phase 2: where the compressed middle starts and ends (docs/architecture.md, "The algorithm",
phase 2).

The head is ``protect_first_n`` messages (at least the leading system messages), moved forward
past tool results so that a call in the
head keeps its results; it also stops before an earlier summary, so that the next compaction
replaces it instead of keeping two. The tail is what fits the tail budget counted from the end,
at least ``min_tail_messages``, moved back so that no tool result is cut from its call. The
latest real user request and the loop after it are never in this middle: the tail moves back to
the request at the latest.

The loop after that request has its own bounds (``loop_bounds``, the loop stage's): whole steps
counted back from the end stay verbatim, the older steps between the request and them are its
middle.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compaction.core.config import CompactionConfig
from compaction.core.messages import Message, last_real_user_index
from compaction.core.pins import kept_and_summarized
from compaction.core.tokens import estimate_tokens

#: Assistant steps the loop stage keeps verbatim at the end of the loop, at the least.
RECENT_STEPS = 3


@dataclass(frozen=True, slots=True)
class Bounds:
    head_end: int  # messages[:head_end] is the protected head
    tail_start: int  # messages[tail_start:] is the kept tail

    @property
    def middle_size(self) -> int:
        return max(0, self.tail_start - self.head_end)


def head_end(messages: Sequence[Message], protect_first_n: int) -> int:
    # Leading system messages are the system prompt: never summarized, whatever N says.
    leading_system = next((i for i, m in enumerate(messages) if m.role != "system"), len(messages))
    end = min(max(protect_first_n, leading_system), len(messages))
    for index in range(end):
        if messages[index].is_summary:
            end = index
            break
    while end < len(messages) and messages[end].role == "tool":
        end += 1
    return end


def tail_start(
    messages: Sequence[Message],
    token_counts: Sequence[int],
    budget: int,
    min_messages: int,
    floor: int,
) -> int:
    """First index of the tail; never below ``floor`` (the end of the head)."""
    start, total = len(messages), 0
    while start > floor and total + token_counts[start - 1] <= budget:
        start -= 1
        total += token_counts[start]
    count = len(messages)
    start = max(floor, min(start, count - min_messages))
    # A tool result must stay with the assistant message that called it.
    while floor < start < count and messages[start].role == "tool":
        start -= 1
    return start


def find_bounds(
    messages: Sequence[Message],
    token_counts: Sequence[int],
    *,
    protect_first_n: int,
    tail_budget: int,
    min_tail_messages: int,
) -> Bounds:
    head = head_end(messages, protect_first_n)
    tail = tail_start(messages, token_counts, tail_budget, min_tail_messages, head)
    last_user = last_real_user_index(messages)
    if last_user is not None and tail > last_user:
        # The latest real request and the loop after it are never summarized here: the loop
        # has its own stage and prompt (``compaction.core.loop``).
        tail = last_user
    return Bounds(head, max(head, tail))


def token_counts(messages: Sequence[Message], config: CompactionConfig) -> list[int]:
    """Each message's estimate under ``config``: what the rules below take as ``counts``."""
    estimate = config.estimator()
    return [estimate_tokens(m, estimate) for m in messages]


def compactable(
    messages: Sequence[Message], config: CompactionConfig, counts: Sequence[int] | None = None
) -> bool:
    """Whether ``/compact`` would find something to summarize in either segment: the history
    between the protected head and the request, or the loop's steps before its recent ones
    (docs/architecture.md, "The algorithm"). The producers ask it before enqueueing; ``counts``
    (``token_counts``) when the caller has them already."""
    counts = token_counts(messages, config) if counts is None else counts
    return history_compactable(messages, counts, config) or loop_compactable(
        messages, counts, protect_first_n=config.protect_first_n
    )


def history_compactable(
    messages: Sequence[Message], counts: Sequence[int], config: CompactionConfig
) -> bool:
    """More than the protected head, the minimal tail and the request: the history stage."""
    if len(messages) <= head_end(messages, config.protect_first_n):
        return False
    bounds = bounds_for(messages, counts, config, tail_budget=0)
    return summarizable(messages[bounds.head_end : bounds.tail_start])


def loop_compactable(
    messages: Sequence[Message],
    counts: Sequence[int],
    *,
    protect_first_n: int,
    budget: int = 0,
    keep: int = RECENT_STEPS,
) -> bool:
    """Older steps after the protected head and before the recent ones (at least ``keep``, more
    while they fit ``budget``): the loop stage."""
    bounds = loop_bounds(
        messages, counts, budget=budget, keep=keep, protect_first_n=protect_first_n
    )
    return bounds is not None and summarizable(messages[bounds.start : bounds.end])


@dataclass(frozen=True, slots=True)
class LoopBounds:
    request: int  # messages[request] is the latest real user request
    start: int  # messages[start:end] is the loop's older part
    end: int  # messages[end:] are the recent steps, kept verbatim
    steps: int  # how many recent steps that is


def loop_bounds(
    messages: Sequence[Message],
    counts: Sequence[int],
    *,
    budget: int,
    keep: int,
    protect_first_n: int,
) -> LoopBounds | None:
    """The loop's older part and its recent steps: whole steps (a message and the tool results
    after it) counted back from the end, at least ``keep``, more while they fit ``budget``.
    The older part starts after the request and after the protected head (``head_end``: on a
    single-request agent the first steps are in it, and stay verbatim as in the history stage).
    An execution summary at its start is part of it (folded into the next one), never a step.
    ``None`` without a real user request."""
    request = last_real_user_index(messages)
    if request is None:
        return None
    start = max(request + 1, head_end(messages, protect_first_n))
    floor = start + 1 if start < len(messages) and messages[start].is_summary else start
    at, total, steps = len(messages), 0, 0
    while at > floor:
        begin = at - 1
        while begin > floor and messages[begin].role == "tool":
            begin -= 1
        size = sum(counts[begin:at])
        if steps >= keep and total + size > budget:
            break
        at, total, steps = begin, total + size, steps + 1
    return LoopBounds(request, start, at, steps)


def bounds_for(
    items: Sequence[Message], counts: Sequence[int], config: CompactionConfig, *, tail_budget: int
) -> Bounds:
    """``find_bounds`` with the config's head and minimal tail."""
    return find_bounds(
        items,
        counts,
        protect_first_n=config.protect_first_n,
        tail_budget=tail_budget,
        min_tail_messages=config.min_tail_messages,
    )


def summarizable(middle: Sequence[Message]) -> bool:
    """At least two messages besides the pinned steps (docs/architecture.md, "Pins"), not only
    earlier summaries."""
    _kept, rest = kept_and_summarized(middle)
    return len(rest) >= 2 and not all(m.is_summary for m in rest)
