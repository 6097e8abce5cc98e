"""Phase 1: clear old tool outputs (docs/architecture.md, "The algorithm", phase 1), at no LLM cost.

Walking from the end, once the running total passes the tail budget, every earlier tool result
longer than ``prune_min_chars`` gets a placeholder. The original is kept on the message
(``original_content``) so the summarizer and the full history still see it. The protected head
is never touched, nor a pinned step (``compaction.core.pins``; docs/architecture.md, "Pins").
"""

from __future__ import annotations

from collections.abc import Sequence

from compaction.core.messages import Message
from compaction.core.pins import pinned_indices

PLACEHOLDER = {
    "zh": "[旧工具输出已清除以节省上下文]",
    "en": "[Old tool output cleared to save context]",
}


def prune_cut(token_counts: Sequence[int], floor: int, budget: int) -> int:
    """Index where the running total from the end first passes ``budget`` (``floor`` if never):
    tool results before it are pruned."""
    total = 0
    for index in range(len(token_counts) - 1, floor - 1, -1):
        total += token_counts[index]
        if total > budget:
            return index
    return floor


def prune(
    messages: Sequence[Message],
    token_counts: Sequence[int],
    *,
    head_end: int,
    budget: int,
    min_chars: int,
    placeholder: str,
) -> tuple[list[Message], list[int]]:
    """The pruned list and the indices of the messages that got the placeholder."""
    out = list(messages)
    pruned: list[int] = []
    pinned = pinned_indices(messages)
    for index in range(head_end, prune_cut(token_counts, head_end, budget)):
        message = out[index]
        if (
            message.role == "tool"
            and index not in pinned
            and message.original_content is None
            and len(message.content) > min_chars
        ):
            # Built unchecked (``with_content`` checks the new content's type): only the
            # content changes, to a placeholder of ours, and this message passed the checks.
            out[index] = Message.from_trusted(
                message.role,
                placeholder,
                message.tool_calls,
                message.tool_call_id,
                message.id,
                message.content,
                message.is_summary,
                message.pinned,
            )
            pruned.append(index)
    return out, pruned
