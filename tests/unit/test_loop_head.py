"""The protected head holds in the loop stage too (compaction/core/loop.py, boundaries.py): on a
single-request agent the first ``protect_first_n`` messages, assistant steps included, stay
verbatim, and the rules that choose a stage (``first_stage``, ``compactable``) count the same
head, so a request they queue is one the stage can run."""

from __future__ import annotations

from compaction import CompactionConfig, compact_loop, compact_staged, first_stage
from compaction.core.boundaries import compactable
from compaction.core.messages import Message
from tests.fakes import FakeSummarizer
from tests.invariants import check_invariants
from tests.unit.builders import system, user
from tests.unit.test_loop import REQUEST, numbered, steps


def single_request(count: int) -> list[Message]:
    """The system prompt, the one request, then ``count`` steps (the first calls two tools)."""
    return numbered([system(), user(REQUEST), *steps(count)])


def test_the_loop_stage_keeps_the_protected_head() -> None:
    config = CompactionConfig(context_window=4_000, protect_first_n=5)
    messages = single_request(20)
    # head: system, request, step 0 (an assistant message and its two tool results)
    result = compact_loop(messages, config, FakeSummarizer())
    check_invariants(messages, result)
    start, _end = result.middle
    assert start == 5
    assert result.messages[:5] == messages[:5]
    assert result.messages[5] is result.summary_message
    assert not {m.id for m in messages[:5]} & set(result.compressed_ids)


def test_the_default_head_keeps_the_first_step_of_a_single_request_agent() -> None:
    config = CompactionConfig(context_window=4_000)  # protect_first_n: 3 by default
    messages = single_request(20)
    staged = compact_staged(messages, config, FakeSummarizer(), reason="manual")
    assert staged.history is None and staged.loop is not None
    # message 3 (index 2) is the first step; its tool results stay with it
    assert staged.loop.messages[:5] == messages[:5]
    assert staged.loop.middle[0] == 5


def test_a_loop_whose_older_steps_are_all_protected_has_nothing_to_compact() -> None:
    config = CompactionConfig(context_window=4_000, protect_first_n=5)
    messages = single_request(4)  # step 0 protected, the 3 recent steps kept: nothing between
    assert first_stage(messages, config) is None
    assert not compactable(messages, config)
    unprotected = CompactionConfig(context_window=4_000, protect_first_n=1)
    assert first_stage(messages, unprotected) == "loop"
