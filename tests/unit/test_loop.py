"""The loop stage (compaction/core/loop.py): the older steps after the latest user request
summarized into one execution summary, the request and the recent steps verbatim, steps whole, an
earlier execution summary folded, the loop's own prompts in Chinese and English. Real transcripts:
test_loop_transcripts.py."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from compaction import CompactionConfig, NothingToCompact
from compaction.core.assembly import ORPHAN_RESULT
from compaction.core.loop import RECENT_STEPS, compact_loop, is_loop_summary
from compaction.core.messages import Message, ToolCall
from compaction.core.prompts import HEADINGS, summary_prefix
from compaction.core.prompts_loop import LOOP, LOOP_HEADINGS, LOOP_MARKER
from compaction.core.validate import problems
from tests.fakes import FakeSummarizer
from tests.invariants import check_invariants
from tests.unit.builders import assistant, summary, system, tool, user

#: threshold 2,800 tokens, tail budget 560
CONFIG = CompactionConfig(context_window=4_000, protect_first_n=1)
REQUEST = "Fix the failing test in src/app.py and run the suite."
ZH_REQUEST = "请修复 src/app.py 中失败的测试，并运行全部测试。"


def steps(count: int, *, first: int = 0, chars: int = 600) -> list[Message]:
    """``count`` loop steps; every third step calls two tools at once."""
    out: list[Message] = []
    for s in range(first, first + count):
        ids = [f"s{s}a", f"s{s}b"] if s % 3 == 0 else [f"s{s}a"]
        calls = [ToolCall(i, "bash", json.dumps({"command": f"cat /srv/f{s}.py"})) for i in ids]
        out.append(assistant(f"step {s}: reading /srv/f{s}.py", *calls))
        out += [tool(f"result {i}\n" + "x" * chars, i) for i in ids]
    return out


def numbered(messages: list[Message], first: int = 1) -> list[Message]:
    return [replace(m, id=i) for i, m in enumerate(messages, start=first)]


def session(count: int = 20, *, request: str = REQUEST, chars: int = 600) -> list[Message]:
    """A short history, the request, and ``count`` steps after it."""
    history = [user("Set up the project."), assistant("Done: the project is set up.")]
    return numbered([system(), *history, user(request), *steps(count, chars=chars)])


def test_under_the_threshold_nothing_changes() -> None:
    messages = session(2)
    result = compact_loop(messages, CONFIG, FakeSummarizer())
    assert not result.summarized and result.messages == messages
    assert result.tokens_before == result.tokens_after


def test_one_execution_summary_right_after_the_request() -> None:
    messages = session()
    result = compact_loop(messages, CONFIG, FakeSummarizer())
    check_invariants(messages, result)
    start, end = result.middle
    assert start == 4 and messages[start - 1].content == REQUEST
    assert result.messages[:start] == messages[:start]  # history and request verbatim
    summaries = [m for m in result.messages if m.is_summary]
    assert summaries == [result.summary_message] and result.messages[start] is summaries[0]
    assert is_loop_summary(summaries[0]) and result.summary_text.startswith(LOOP.prefix["en"])
    assert result.tokens_after < result.tokens_before
    assert result.compressed_ids == [m.id for m in messages[start:end]]


@pytest.mark.parametrize("keep", [1, 2, 3, 5, 8])
def test_recent_steps_stay_verbatim_and_whole(keep: int) -> None:
    messages = session(30, chars=2_000)  # each step over the tail budget: exactly ``keep`` kept
    result = compact_loop(messages, CONFIG, FakeSummarizer(), keep_recent_steps=keep)
    start, end = result.middle
    tail = result.messages[start + 1 :]
    assert tail == messages[end:] and tail[0].role == "assistant"
    assert sum(m.role == "assistant" for m in tail) == result.recent_steps == keep
    assert problems(result.messages, "openai") == problems(result.messages, "anthropic") == []
    assert not any(m.content in ORPHAN_RESULT.values() for m in result.messages)


def test_parallel_calls_stay_with_their_step() -> None:
    messages = session(9, chars=2_000)
    # Step 6 calls two tools: keeping two steps starts the tail at step 7, three at step 6.
    for keep, first in [(2, "step 7"), (3, "step 6")]:
        result = compact_loop(messages, CONFIG, FakeSummarizer(), keep_recent_steps=keep)
        start, end = result.middle
        assert messages[end].content.startswith(first)
        summarized = {m.tool_call_id for m in messages[start:end] if m.role == "tool"}
        called = {c.id for m in messages[start:end] for c in m.tool_calls}
        assert summarized == called  # every result summarized with its call


def test_more_recent_steps_when_the_tail_budget_holds_them() -> None:
    messages = session(30, chars=200)
    small = compact_loop(messages, CONFIG, FakeSummarizer())
    roomy = CONFIG.model_copy(update={"tail_token_budget_ratio": 0.5})
    large = compact_loop(messages, roomy, FakeSummarizer())
    assert small.recent_steps >= RECENT_STEPS
    assert large.recent_steps > small.recent_steps


def test_the_summarizer_gets_the_older_steps_with_the_loop_prompt() -> None:
    messages = session()
    summarizer = FakeSummarizer()
    result = compact_loop(messages, CONFIG, summarizer)
    request = summarizer.requests[0]
    start, end = result.middle
    assert list(request.messages) == messages[start:end]
    assert request.prompts is LOOP and request.previous_summary is None
    assert request.head == tuple(messages[:start])
    for heading in LOOP_HEADINGS["en"].values():
        assert f"\n{heading}\n" in request.prompt
    assert HEADINGS["en"]["goal"] not in request.prompt  # not the history's structure
    assert "/srv/f0.py" in request.serialized


def test_chinese_request_gets_the_chinese_prompt_and_opening() -> None:
    messages = session(request=ZH_REQUEST)
    summarizer = FakeSummarizer()
    result = compact_loop(messages, CONFIG, summarizer)
    assert result.language == "zh"
    assert result.summary_text.startswith(LOOP.prefix["zh"])
    prompt = summarizer.requests[0].prompt
    assert "待摘要的步骤" in prompt
    assert all(heading in prompt for heading in LOOP_HEADINGS["zh"].values())
    english = compact_loop(messages, CONFIG, FakeSummarizer(), language="en")
    assert english.summary_text.startswith(LOOP.prefix["en"])


def test_an_earlier_execution_summary_is_folded_never_read_again() -> None:
    first = compact_loop(session(), CONFIG, FakeSummarizer())
    stored = numbered(first.messages)  # as the store gives the summary an id
    later = numbered(steps(12, first=100), first=len(stored) + 1)
    summarizer = FakeSummarizer()
    second = compact_loop([*stored, *later], CONFIG, summarizer)
    check_invariants([*stored, *later], second)
    start = second.middle[0]
    assert start == first.middle[0] and second.folded_previous
    assert stored[start].id in second.compressed_ids
    loop_summaries = [m for m in second.messages if is_loop_summary(m)]
    assert loop_summaries == [second.summary_message]
    request = summarizer.requests[0]
    assert "Previous execution summary" in request.prompt
    body = LOOP.strip(first.summary_text).split("## Exact identifiers")[0].strip()
    assert request.previous_summary is not None and body in request.previous_summary
    # The folded summary's turns are not summarized again: only the steps since.
    assert not any(m.is_summary for m in request.messages)
    assert {m.id for m in request.messages} <= {m.id for m in stored[start + 1 :] + later}


def test_the_stored_previous_summary_wins() -> None:
    summarizer = FakeSummarizer()
    stored = f"{LOOP.prefix['en']}\n\n## Done\n- read /srv/stored.py"
    compact_loop(session(), CONFIG, summarizer, previous_loop_summary=stored)
    assert summarizer.requests[0].previous_summary == "## Done\n- read /srv/stored.py"


def test_a_history_summary_before_the_request_stays_and_is_not_folded() -> None:
    history = [summary("the setup is done"), assistant("ok")]
    messages = numbered([system(), *history, user(REQUEST), *steps(20)])
    summarizer = FakeSummarizer()
    result = compact_loop(messages, CONFIG, summarizer)
    assert result.messages[:4] == messages[:4] and not result.folded_previous
    assert summarizer.requests[0].previous_summary is None
    assert [m.is_summary for m in result.messages].count(True) == 2


@pytest.mark.parametrize(
    "messages",
    [
        session(RECENT_STEPS, chars=3_000),  # every step is a recent one
        numbered([system(), user(REQUEST), *steps(3, chars=3_000), user("and now?")]),
        numbered([system(), assistant("hi"), *steps(10, chars=3_000)]),  # no user request
    ],
    ids=["only-recent-steps", "request-last", "no-request"],
)
def test_nothing_to_compact(messages: list[Message]) -> None:
    with pytest.raises(NothingToCompact):
        compact_loop(messages, CONFIG, FakeSummarizer())


def test_only_an_earlier_summary_before_the_recent_steps_is_nothing_to_compact() -> None:
    messages = session(30, chars=2_000)
    first = compact_loop(messages, CONFIG, FakeSummarizer(), keep_recent_steps=6)
    assert first.tokens_after >= CONFIG.threshold_tokens  # the recent steps alone are over
    with pytest.raises(NothingToCompact):
        compact_loop(first.messages, CONFIG, FakeSummarizer(), keep_recent_steps=6)


def test_a_recent_step_over_the_threshold_is_kept_and_the_older_steps_compact() -> None:
    """docs/algorithm.md, "Bounds": the step stays whole, the steps before it are summarized."""
    huge = [assistant("dump", "big"), tool("y" * 12_000, "big")]
    messages = numbered([system(), user(REQUEST), *steps(10), *huge])
    result = compact_loop(messages, CONFIG, FakeSummarizer())
    assert result.summarized and result.messages[-2:] == messages[-2:]
    assert result.tokens_after < result.tokens_before
    assert problems(result.messages, provider="openai") == []


def test_is_loop_summary_needs_the_flag_and_the_marker() -> None:
    assert is_loop_summary(Message("user", f"{LOOP_MARKER} x", is_summary=True))
    assert not is_loop_summary(user(f"{LOOP_MARKER} typed by a user"))
    assert not is_loop_summary(Message("user", summary_prefix("en"), is_summary=True))


def test_loop_opening_is_stripped_from_a_reply_that_copies_it() -> None:
    summarizer = FakeSummarizer(f"{LOOP.prefix['en']}\n\n## Done\n" + "- read a file\n" * 30)
    result = compact_loop(session(), CONFIG, summarizer)
    assert result.summary_text.count(LOOP_MARKER) == 1
