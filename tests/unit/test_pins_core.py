"""Pins in the pure core (compaction/core/pins.py; docs/algorithm.md, "Pins"): a pinned message,
with the tool call or results it forms a step with, is never pruned nor summarized by either
stage; it stays verbatim, in order, before the summary that replaces the rest of the middle."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from compaction import CompactionConfig, Message, NothingToCompact, ToolCall, compact
from compaction.core.errors import PinsOverThreshold
from compaction.core.loop import compact_loop
from compaction.core.pins import check_pins, pinned_indices, pinned_tokens
from compaction.core.pruning import PLACEHOLDER, prune
from compaction.core.staged import compact_staged
from compaction.core.validate import problems
from tests.fakes import SMALL, FakeSummarizer, conversation
from tests.unit.builders import assistant, convo, tool, user

#: threshold 2,800 tokens, tail budget 560 (as tests/unit/test_loop.py)
LOOP_CONFIG = CompactionConfig(context_window=4_000, protect_first_n=1)


def pin(messages: list[Message], *indices: int) -> list[Message]:
    return [replace(m, pinned=True) if i in indices else m for i, m in enumerate(messages)]


def texts(messages: list[Message]) -> str:
    return json.dumps([m.content for m in messages])


def test_a_pin_holds_its_whole_step() -> None:
    messages = convo("S U A:c1,c2 T:c1 T:c2 A U A")
    assert pinned_indices(messages) == frozenset()
    assert pinned_indices(pin(messages, 3)) == {2, 3, 4}  # a result keeps its call and siblings
    assert pinned_indices(pin(messages, 2)) == {2, 3, 4}  # a call keeps its results
    assert pinned_indices(pin(messages, 1, 6)) == {1, 6}
    assert pinned_indices(pin(messages, 5)) == {5}


def test_the_flag_survives_the_messages_copies() -> None:
    message = replace(tool("long output", "c1"), pinned=True)
    assert message.with_content("short").pinned
    assert Message.from_trusted("user", "x", [], None, 1, None, False, True).pinned
    assert not Message(role="user", content="x").pinned


def test_a_pinned_step_in_the_middle_survives_verbatim_before_the_summary() -> None:
    messages = conversation(10)
    # turn 3: user (13), call (14), its result (15), answer (16); the result is pinned
    pinned = pin(messages, 15)
    summarizer = FakeSummarizer()
    result = compact(pinned, SMALL, summarizer, reason="manual")
    start, end = result.middle
    assert start < 14 and end > 15
    out = result.messages
    assert problems(out) == []
    assert out[:start] == pinned[:start]  # the head, unchanged
    # then the pinned step, whole and unpruned, then the summary, then the tail
    assert out[start : start + 2] == [pinned[14], pinned[15]]
    assert out[start + 1].content == messages[15].content
    assert out[start + 2] is result.summary_message
    assert out[start + 3 :] == pinned[end:]
    assert result.removed_count == end - start - 2 and result.kept_ids == [15, 16]
    assert result.compressed_ids == [m.id for m in pinned[start:end] if m.id not in (15, 16)]
    # the summarizer never reads the pinned step as part of what it replaces
    read = [m for request in summarizer.requests for m in request.messages]
    assert all(m.id not in (15, 16) for m in read)
    assert len(result.messages) == len(messages) - result.removed_count + 1


def test_pinned_messages_keep_their_order() -> None:
    messages = pin(conversation(10), 9, 21)  # two user requests of the middle
    result = compact(messages, SMALL, FakeSummarizer(), reason="manual")
    start, _end = result.middle
    kept = result.messages[start : start + 2]
    assert [m.id for m in kept] == [messages[9].id, messages[21].id]
    assert result.messages[start + 2].is_summary
    assert problems(result.messages) == []


def test_a_head_of_system_only_keeps_the_first_request_before_a_pinned_step() -> None:
    """With the head the system prompt alone, a pinned call would open the conversation: the
    middle's first request stays too (the first non-system message is the user's)."""
    messages = pin(conversation(10), 6)  # turn 1's call, its result at 7
    config = CompactionConfig(context_window=4_000, protect_first_n=1)
    result = compact(messages, config, FakeSummarizer(), reason="manual")
    assert result.middle[0] == 1
    assert result.messages[1:4] == [messages[1], messages[6], messages[7]]
    assert result.messages[4].is_summary and result.kept_ids == [2, 7, 8]
    assert problems(result.messages) == []


def test_pruning_skips_a_pinned_result() -> None:
    messages = conversation(10, tool_chars=2_000)
    counts = [len(m.content) // 4 for m in messages]
    _out, plain = prune(messages, counts, head_end=4, budget=100, min_chars=200, placeholder="x")
    assert 7 in plain  # pruned when not pinned
    pinned = pin(messages, 6)  # the call of that result
    out, at = prune(pinned, counts, head_end=4, budget=100, min_chars=200, placeholder="x")
    assert 7 not in at and out[7] is pinned[7]
    assert at == [i for i in plain if i != 7]


def test_an_automatic_run_that_only_prunes_leaves_a_pinned_result_whole() -> None:
    messages = conversation(6, tool_chars=3_000)
    config = CompactionConfig(context_window=6_000)
    pruned = compact(messages, config, FakeSummarizer())
    assert not pruned.summarized and 8 in pruned.pruned_ids  # id 8: turn 1's result
    result = compact(pin(messages, 6), config, FakeSummarizer())  # its call pinned
    assert not result.summarized and result.pruned_ids == [12, 16]
    assert result.messages[7].content == messages[7].content != PLACEHOLDER["en"]


def test_a_middle_of_pins_only_is_nothing_to_compact() -> None:
    messages = conversation(4)
    everything = pin(messages, *range(len(messages)))
    with pytest.raises(NothingToCompact):
        compact(everything, SMALL, FakeSummarizer(), reason="manual")


def loop_session(count: int = 20) -> list[Message]:
    out: list[Message] = [user("Set up the project."), assistant("Done.")]
    out.append(user("Fix the failing test in src/app.py and run the suite."))
    for s in range(count):
        call = ToolCall(f"s{s}", "bash", json.dumps({"command": f"cat /srv/f{s}.py"}))
        out += [assistant(f"step {s}", call), tool(f"result {s}\n" + "x" * 600, f"s{s}")]
    system = Message(role="system", content="You are a coding agent.")
    return [replace(m, id=i) for i, m in enumerate([system, *out], start=1)]


def test_the_loop_stage_keeps_a_pinned_step_before_its_execution_summary() -> None:
    messages = loop_session()
    # step 2: its call at 8, its result at 9
    pinned = pin(messages, 9)
    summarizer = FakeSummarizer()
    result = compact_loop(pinned, LOOP_CONFIG, summarizer)
    start, end = result.middle
    assert start < 8 and end > 9
    out = result.messages
    assert problems(out) == []
    assert out[:start] == pinned[:start]
    assert out[start : start + 2] == [pinned[8], pinned[9]]
    assert out[start + 2] is result.summary_message
    assert out[start + 3 :] == pinned[end:]
    assert result.removed_count == end - start - 2
    assert "result 2\\n" not in texts([m for r in summarizer.requests for m in r.messages])


def test_both_stages_keep_a_pinned_step() -> None:
    history = conversation(8)
    request = user("Now fix src/app.py and run the suite.")
    loop = loop_session(16)[4:]  # the steps only
    messages = [replace(m, id=i) for i, m in enumerate([*history, request, *loop], start=1)]
    loop_result = len(history) + 4  # step 1's result (its call just before)
    pinned = pin(messages, 11, loop_result)  # a history result (its call at 10), a loop result
    # pruning alone is not enough
    config = CompactionConfig(context_window=4_000, protect_first_n=1, prune_min_chars=100_000)
    staged = compact_staged(pinned, config, FakeSummarizer(), reason="auto")
    assert staged.history is not None and staged.loop is not None
    out = staged.messages
    kept = [pinned[i] for i in (10, 11, loop_result - 1, loop_result)]
    assert [m for m in out if m in kept] == kept  # verbatim, in order
    assert out.index(kept[1]) < out.index(staged.loop.summary_message)  # type: ignore[arg-type]
    assert problems(out) == []


def test_pinned_tokens_count_the_steps() -> None:
    messages = pin(convo("S U A:c1 T:c1 A"), 3)
    counts = [5, 7, 11, 13, 17]
    assert pinned_tokens(messages, counts) == 24
    assert pinned_tokens(convo("S U A"), [1, 2, 3]) == 0


def test_pins_with_the_system_prompt_at_the_threshold_are_refused() -> None:
    messages = pin(convo("S U A:c1 T:c1 A"), 3)
    counts = [40, 7, 30, 30, 17]
    check_pins(messages, counts, 101)  # 40 + 60 under 101
    with pytest.raises(PinsOverThreshold, match="threshold of 100"):
        check_pins(messages, counts, 100)
    # a pinned system message counts once, as the system prompt
    check_pins(pin(convo("S U A"), 0), [40, 1, 1], 41)
