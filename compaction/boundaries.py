"""Phase 2: where the compressed middle starts and ends (docs/architecture.md, "The algorithm",
phase 2).

The head is ``protect_first_n`` messages (at least the leading system messages), moved forward
past tool results so that a call in the
head keeps its results; it also stops before an earlier summary, so that the next compaction
replaces it instead of keeping two. The tail is what fits the tail budget counted from the end,
at least ``min_tail_messages``, moved back so that no tool result is cut from its call. The
last real user message is never summarized: when it falls between the two, the tail moves back
to it or the head moves past it, whichever leaves the larger middle.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compaction.config import CompactionConfig
from compaction.messages import Message, last_real_user_index
from compaction.tokens import estimate_tokens


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
    if last_user is not None and head <= last_user < tail:
        # Keep the last real request verbatim: either the tail grows back to it, or the head
        # grows past it, whichever leaves more to summarize. (An agent that works for hours
        # after one request would otherwise have nothing left to compact.)
        before = sum(token_counts[head:last_user])
        after = sum(token_counts[last_user + 1 : tail])
        # Growing the head past an earlier summary would keep two summaries.
        summary_between = any(m.is_summary for m in messages[head:last_user])
        # The way that leaves a middle worth summarizing (two messages) wins when the other
        # does not, so that whether a session is compactable does not hang on token sums.
        grown, moved = tail - last_user - 1, last_user - head
        grow = after > before
        if (grown >= 2) != (moved >= 2):
            grow = grown >= 2
        if grow and not summary_between:
            head = last_user + 1
        else:
            tail = last_user
    return Bounds(head, max(head, tail))


def compactable(messages: Sequence[Message], config: CompactionConfig) -> bool:
    """Whether ``/compact`` would find something to summarize: more than the protected head,
    the minimal tail and the last real user message (docs/architecture.md, "The algorithm",
    phase 2). The producers ask it before enqueueing, the worker before announcing a run."""
    if len(messages) <= head_end(messages, config.protect_first_n):
        return False
    estimate = config.estimator()
    counts = [estimate_tokens(m, estimate) for m in messages]
    bounds = bounds_for(messages, counts, config, tail_budget=0)
    return summarizable(messages[bounds.head_end : bounds.tail_start])


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
    """At least two messages, not only earlier summaries."""
    return len(middle) >= 2 and not all(m.is_summary for m in middle)
