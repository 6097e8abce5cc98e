"""The invariants every compaction must keep, checked by the property and transcript tests."""

from __future__ import annotations

from collections.abc import Sequence

from compaction.core.engine import CompactionResult
from compaction.core.messages import Message, last_real_user_index
from compaction.core.validate import problems


def same_up_to_pruning(kept: Message, original: Message) -> bool:
    if kept == original:
        return True
    return (
        kept.role == original.role == "tool"
        and kept.id == original.id
        and kept.original_content == original.source_text
    )


def new_problems(messages: Sequence[Message], out: Sequence[Message]) -> list[str]:
    """What ``out`` breaks of both providers' rules, less a system message the input already had
    after the conversation started (deer-flow injects one per turn): the engine keeps it where it
    was, valid for OpenAI, and ``to_anthropic`` hoists it into ``system``
    (compaction/core/formats.py). Any other problem, or a system message the engine moved or
    made, counts."""
    had = [m for m in messages[_first_other(messages) :] if m.role == "system"]
    found = []
    for problem in problems(out):
        index = int(problem.split(":", 1)[0].removeprefix("message "))
        inherited = problem.endswith("a system message after the conversation started")
        if not (inherited and out[index] in had):
            found.append(problem)
    return found


def _first_other(messages: Sequence[Message]) -> int:
    return next((i for i, m in enumerate(messages) if m.role != "system"), len(messages))


def check_invariants(messages: Sequence[Message], result: CompactionResult) -> None:
    out = result.messages
    assert new_problems(messages, out) == [], new_problems(messages, out)[:3]
    if not result.summarized:
        assert len(out) == len(messages)
        assert all(same_up_to_pruning(k, o) for k, o in zip(out, messages, strict=True))
        return
    start, end = result.middle
    # The head is unchanged, not even pruned.
    assert out[:start] == list(messages[:start])
    assert out[start].is_summary and out[start] is result.summary_message
    # The tail is a suffix of the input, up to pruning.
    tail = out[start + 1 :]
    assert len(tail) == len(messages) - end
    assert all(same_up_to_pruning(k, o) for k, o in zip(tail, messages[end:], strict=True))
    # The compressed ids are one contiguous middle.
    assert result.compressed_ids == [m.id for m in messages[start:end]]
    assert result.removed_count == end - start >= 2
    # The last real user message survives.
    last_user = last_real_user_index(messages)
    if last_user is not None:
        assert messages[last_user].id in {m.id for m in out}
    assert result.tokens_after < result.tokens_before or result.removed_count >= 2
