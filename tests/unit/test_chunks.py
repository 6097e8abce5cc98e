"""Chunked folding keeps its promises (docs/architecture.md, "The algorithm", phase 3): no chunk
starts with a tool result whose call is in the chunk before, and no summarizer call is larger
than ``summary_input_max_tokens`` (the previous summary, the running summary, a long focus and a
turn with many tool results included). Through ``compact()`` with a recording summarizer."""

from __future__ import annotations

import json
from dataclasses import replace

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from compaction import CompactionConfig, Message, NothingToCompact, ToolCall, compact
from compaction.core.summary import SummaryRequest
from tests.fakes import FakeSummarizer, conversation

#: The smallest input cap a config allows (summary_max_tokens + 2000, and 4000 at least).
TIGHT = CompactionConfig(
    context_window=4_000,
    summary_min_tokens=500,
    summary_max_tokens=2_000,
    summary_input_max_tokens=4_000,
)


def assert_promises_kept(requests: list[SummaryRequest], config: CompactionConfig) -> None:
    estimate = config.estimator()
    assert requests
    for request in requests:
        assert estimate(request.prompt) <= config.summary_input_max_tokens, request.chunk_index
        called = {c.id for m in request.messages for c in m.tool_calls}
        results = [m.tool_call_id for m in request.messages if m.role == "tool"]
        assert request.messages[0].role != "tool", request.chunk_index
        assert set(results) <= called, request.chunk_index


def parallel_turn(calls: int, result_chars: int, first: int = 0) -> list[Message]:
    """An assistant turn calling ``calls`` tools at once, then their results."""
    batch = [
        ToolCall(id=f"p{first + k}", name="read", arguments=json.dumps({"path": f"/src/{k}.py"}))
        for k in range(calls)
    ]
    return [
        Message(role="assistant", content="Reading them all.", tool_calls=batch),
        *(Message(role="tool", content="y" * result_chars, tool_call_id=c.id) for c in batch),
    ]


def test_no_chunk_starts_with_a_result_whose_call_is_in_the_chunk_before() -> None:
    summarizer = FakeSummarizer()
    result = compact(conversation(400, tool_chars=2_500), TIGHT, summarizer, reason="manual")
    assert result.chunks == len(summarizer.requests) > 10
    assert_promises_kept(summarizer.requests, TIGHT)


def test_a_large_previous_summary_is_capped_in_the_first_call() -> None:
    summarizer = FakeSummarizer()
    previous = "## Goal\n" + "an earlier summary, far too long. " * 3_000  # ~26,000 tokens
    compact(conversation(12), TIGHT, summarizer, previous_summary=previous, reason="manual")
    assert_promises_kept(summarizer.requests, TIGHT)
    first = summarizer.requests[0].previous_summary or ""
    assert first.startswith("## Goal\nan earlier summary")
    assert TIGHT.estimator()(first) <= TIGHT.summary_max_tokens


def test_a_running_summary_over_the_budget_is_capped_in_the_next_call() -> None:
    # Accepted (under twice summary_max_tokens), yet too large to pass on whole.
    summarizer = FakeSummarizer(text="## Goal\n" + "a long running summary " * 500)
    compact(conversation(300), TIGHT, summarizer, reason="manual")
    assert len(summarizer.requests) > 1
    assert_promises_kept(summarizer.requests, TIGHT)


def test_a_turn_with_many_results_fits_one_call_and_stays_whole() -> None:
    messages = [
        *conversation(3),
        *parallel_turn(40, 6_000),
        Message(role="assistant", content="Read them."),
        *conversation(3, system=False, first_turn=50),
    ]
    messages = [replace(m, id=i) for i, m in enumerate(messages, start=1)]
    summarizer = FakeSummarizer()
    compact(messages, TIGHT, summarizer, reason="manual")
    assert_promises_kept(summarizer.requests, TIGHT)
    holding = [r for r in summarizer.requests if any(m.role == "tool" for m in r.messages)]
    assert any(sum(m.role == "tool" for m in r.messages) == 40 for r in holding)


def test_a_long_focus_leaves_room_for_the_turns() -> None:
    summarizer = FakeSummarizer()
    focus = "关注数据库结构" * 300  # 2,100 CJK characters: a token each
    compact(conversation(60), TIGHT, summarizer, reason="manual", focus=focus)
    assert_promises_kept(summarizer.requests, TIGHT)
    assert all((r.focus or "").startswith("关注数据库结构") for r in summarizer.requests)


@st.composite
def middles(draw: st.DrawFn) -> list[Message]:
    """Conversations of many turns, some with many parallel calls, ASCII or CJK."""
    out = [Message(role="system", content="sys")]
    letter = draw(st.sampled_from(["y", "数"]))
    for turn in range(draw(st.integers(5, 40))):
        out.append(
            Message(role="user", content=f"ask {turn} " + letter * draw(st.integers(0, 3_000)))
        )
        if draw(st.booleans()):
            out += parallel_turn(draw(st.integers(1, 30)), draw(st.integers(0, 6_000)), turn * 100)
        out.append(Message(role="assistant", content=letter * draw(st.integers(0, 5_000))))
    return [replace(m, id=i) for i, m in enumerate(out, start=1)]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(middles(), st.integers(0, 30_000), st.integers(0, 2_000))
def test_every_call_fits_the_cap(messages: list[Message], previous: int, focus: int) -> None:
    config = CompactionConfig(**{**TIGHT.model_dump(), "context_window": 40_000})  # turns fit
    summarizer = FakeSummarizer()
    try:
        compact(
            messages,
            config,
            summarizer,
            previous_summary=("## Goal\n" + "p" * previous) if previous else None,
            focus="f" * focus or None,
            reason="manual",
        )
    except NothingToCompact:
        return
    event(f"{min(len(summarizer.requests), 5)}+ calls")
    assert_promises_kept(summarizer.requests, config)
