"""``compact()`` end to end on the pure core (docs/architecture.md, "The algorithm"): what the
pipeline keeps, prunes and measures. What the summarizer is given and what comes of its reply:
test_engine_summarizer.py; the errors: test_engine_errors.py."""

from __future__ import annotations

import copy
from dataclasses import replace

import pytest

from compaction import (
    SUMMARY_MARKER,
    CompactionConfig,
    Message,
    NothingToCompact,
    ToolCall,
    compact,
    estimate_messages_tokens,
)
from compaction.core.pruning import PLACEHOLDER
from tests.fakes import SMALL, FakeSummarizer, conversation
from tests.invariants import check_invariants
from tests.unit.builders import convo

DEFAULT = CompactionConfig()  # a 200k window: 140k threshold, a 28k tail budget


def numbered(spec: str) -> list[Message]:
    """``convo(spec)`` with ids 1..n, as the store loads it."""
    return [replace(m, id=i) for i, m in enumerate(convo(spec), start=1)]


def test_seed_integration_shape_forty_messages_manual() -> None:
    messages = conversation(10)[:40]
    summarizer = FakeSummarizer()
    result = compact(messages, SMALL, summarizer, reason="manual")
    check_invariants(messages, result)
    start, end = result.middle
    # system + first user + first assistant (seed default), moved past that call's result
    assert start == 4 and messages[3].role == "tool"
    assert result.removed_count == end - start == len(result.compressed_ids)
    assert len(result.messages) == len(messages) - result.removed_count + 1
    assert result.summary_text.startswith(SUMMARY_MARKER)
    assert result.summary_message is not None and result.summary_message.role == "user"
    assert result.tokens_after < result.tokens_before
    assert len(summarizer.requests) == 1


def test_manual_at_default_settings_keeps_only_head_and_minimal_tail() -> None:
    """The seed's 40 messages fit the 28k tail budget: ``/compact`` still writes a summary, of
    everything between the head and the minimal tail (issue 12, "/compact always compacts")."""
    messages = conversation(10)[:40]
    assert estimate_messages_tokens(messages) < DEFAULT.tail_token_budget
    summarizer = FakeSummarizer()
    result = compact(messages, DEFAULT, summarizer, reason="manual")
    check_invariants(messages, result)
    # Head: system, user, the call and its result. Tail: min_tail_messages (3), the turn's
    # last user message first.
    assert result.middle == (4, 37) and messages[37].role == "user"
    assert result.messages == [*messages[:4], result.summary_message, *messages[37:]]
    assert result.compressed_ids == list(range(5, 38))
    assert result.tokens_after < result.tokens_before and len(summarizer.requests) == 1


def test_auto_at_default_settings_leaves_the_same_conversation_alone() -> None:
    messages = conversation(10)[:40]
    summarizer = FakeSummarizer()
    result = compact(messages, DEFAULT, summarizer, reason="auto")
    assert result.tokens_before < DEFAULT.threshold_tokens
    assert not result.summarized and result.messages == messages and summarizer.requests == []


@pytest.mark.parametrize(
    ("spec", "middle"),
    [
        # the minimal tail would start on T:c1: it moves back to the call
        ("S U A U A U A U A U A:c1,c2,c3 T:c1 T:c2 T:c3", (3, 9)),
        # the tail moves back to the latest request, never into the loop after it
        ("S U A U A:c1 T:c1 A:c2 T:c2 U A:c3 T:c3 A:c4 T:c4", (3, 8)),
        # the head moves past T:c1; the tail stops at the request
        ("S U A:c1 T:c1 U A:c2 T:c2 A:c3 T:c3 U A:c4 T:c4 A", (4, 9)),
    ],
)
def test_the_minimal_tail_never_cuts_a_result_from_its_call(
    spec: str, middle: tuple[int, int]
) -> None:
    messages = numbered(spec)
    result = compact(messages, DEFAULT, FakeSummarizer(), reason="manual")
    check_invariants(messages, result)  # no orphan result, no call without its results
    assert result.middle == middle
    start, end = middle
    assert messages[end].role != "tool" and messages[start].role != "tool"


def test_manual_keeps_the_last_user_message_verbatim_at_default_settings() -> None:
    # One request, then a long run of calls: the history has nothing, the loop is its own
    # stage (compaction/core/staged.py).
    calls = " ".join(f"A:c{i} T:c{i}" for i in range(8))
    messages = numbered(f"S U A U {calls}")
    with pytest.raises(NothingToCompact):
        compact(messages, DEFAULT, FakeSummarizer(), reason="manual")
    # A request near the end: the tail grows back to it.
    messages = numbered(f"S U A {calls} U A:c9 T:c9")
    result = compact(messages, DEFAULT, FakeSummarizer(), reason="manual")
    assert result.middle[1] == len(messages) - 3 and messages[-3] in result.messages


def test_input_list_is_never_mutated() -> None:
    messages = conversation(12, tool_chars=2_000)
    before = copy.deepcopy(messages)
    compact(messages, SMALL, FakeSummarizer(), reason="manual")
    assert messages == before


def test_head_is_never_pruned_even_when_huge_tool_output() -> None:
    call = ToolCall(id="h1", name="read", arguments="{}")
    head = [
        Message(role="user", content="go", id=1),
        Message(role="assistant", content="", tool_calls=[call], id=2),
        Message(role="tool", content="H" * 3_000, tool_call_id="h1", id=3),
    ]
    messages = head + [replace(m, id=m.id + 3) for m in conversation(12, system=False)]  # type: ignore[operator]
    result = compact(
        messages,
        CompactionConfig(context_window=4_000, protect_first_n=2),
        FakeSummarizer(),
        reason="manual",
    )
    assert result.messages[:3] == head  # the call's result joined the head, unpruned
    assert 3 not in result.pruned_ids


def test_auto_below_threshold_changes_nothing_and_calls_no_llm() -> None:
    messages = conversation(2)
    summarizer = FakeSummarizer()
    result = compact(messages, CompactionConfig(), summarizer, reason="auto")
    assert not result.summarized and result.messages == messages
    assert result.tokens_after == result.tokens_before == estimate_messages_tokens(messages)
    assert summarizer.requests == []


def test_auto_stops_after_phase_one_when_pruning_is_enough() -> None:
    messages = conversation(6, tool_chars=6_000)
    config = CompactionConfig(context_window=12_000, threshold_percent=50)
    assert estimate_messages_tokens(messages) >= config.threshold_tokens
    summarizer = FakeSummarizer()
    result = compact(messages, config, summarizer, reason="auto")
    assert not result.summarized and summarizer.requests == []
    assert result.pruned_count > 0 and result.tokens_after < config.threshold_tokens
    pruned = [m for m in result.messages if m.id in result.pruned_ids]
    assert all(m.content == PLACEHOLDER["en"] and m.original_content for m in pruned)
    check_invariants(messages, result)


def test_manual_runs_the_whole_pipeline_below_threshold() -> None:
    messages = conversation(20)
    config = CompactionConfig(context_window=10_000)
    assert estimate_messages_tokens(messages) < config.threshold_tokens
    summarizer = FakeSummarizer()
    result = compact(messages, config, summarizer, reason="manual")
    assert result.summarized and len(summarizer.requests) == 1


def test_last_real_user_message_is_never_summarized() -> None:
    messages = conversation(10)
    last_user = max(i for i, m in enumerate(messages) if m.role == "user")
    result = compact(
        messages,
        CompactionConfig(context_window=1_200, threshold_percent=95),
        FakeSummarizer(),
        reason="manual",
    )
    assert messages[last_user].id not in result.compressed_ids
    assert messages[last_user] in result.messages


def test_timings_cover_every_phase() -> None:
    result = compact(conversation(10), SMALL, FakeSummarizer(), reason="manual")
    assert {
        "estimate",
        "prune",
        "boundaries",
        "serialize",
        "ledger",
        "summarize",
        "assemble",
    } <= set(result.timings)
