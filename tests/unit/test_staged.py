"""The two stages in order (compaction/core/staged.py): the history first, the loop only when the
history alone leaves the session over its threshold or has nothing; an execution summary that the
history later holds is read as a turn, never dropped (compaction/core/summary.py)."""

from __future__ import annotations

import json

import pytest

from compaction import (
    NothingToCompact,
    compact,
    compact_loop,
    compact_staged,
    first_stage,
    is_loop_summary,
    loop_follows,
)
from compaction.core.boundaries import compactable, token_counts
from compaction.core.messages import Message, ToolCall
from compaction.core.prompts_loop import LOOP_MARKER
from tests.fakes import FakeSummarizer
from tests.invariants import check_invariants
from tests.unit.builders import assistant, system, tool, user
from tests.unit.test_loop import CONFIG, REQUEST, numbered, session, steps


def long_history(turns: int = 12, chars: int = 600) -> list[Message]:
    out: list[Message] = []
    for t in range(turns):
        out += [user(f"question {t}: " + "q" * chars), assistant(f"answer {t}: " + "a" * chars)]
    return out


def reasoning_steps(count: int, *, first: int = 0) -> list[Message]:
    """Steps whose weight is the assistant's own text: pruning old tool results cannot help."""
    out: list[Message] = []
    for s in range(first, first + count):
        call = ToolCall(f"r{s}", "bash", json.dumps({"command": f"pytest tests/t{s}.py"}))
        out += [assistant(f"step {s}: " + "reasoning " * 60, call), tool(f"{s} passed", f"r{s}")]
    return out


def test_one_request_and_a_long_loop_starts_with_the_loop() -> None:
    messages = numbered([system(), user(REQUEST), *steps(20)])
    assert first_stage(messages, CONFIG) == "loop"
    staged = compact_staged(messages, CONFIG, FakeSummarizer())
    assert staged.history is None and staged.loop is not None and staged.loop.summarized
    check_invariants(messages, staged.loop)
    assert staged.tokens_after < staged.tokens_before


def test_first_stage_reads_the_counts_it_is_given() -> None:
    # The worker estimates each message once and passes the counts to every rule.
    messages = numbered([system(), *long_history(), user(REQUEST), *steps(2)])
    counts = token_counts(messages, CONFIG)
    assert first_stage(messages, CONFIG, counts) == first_stage(messages, CONFIG) == "history"
    assert compactable(messages, CONFIG, counts)
    # Weightless messages all fit any tail: nothing is left to summarize in either segment.
    assert first_stage(messages, CONFIG, [0] * len(messages)) is None
    assert not compactable(messages, CONFIG, [0] * len(messages))


def test_a_history_that_suffices_stops_there() -> None:
    # A long history and a short loop: the history stage alone gets under the threshold.
    messages = numbered([system(), *long_history(), user(REQUEST), *steps(2)])
    assert first_stage(messages, CONFIG) == "history"
    staged = compact_staged(messages, CONFIG, FakeSummarizer())
    assert staged.loop is None and staged.history is not None
    assert staged.tokens_after < CONFIG.threshold_tokens
    assert not loop_follows(staged.history, CONFIG)


def test_the_loop_follows_when_the_history_is_not_enough() -> None:
    messages = numbered([system(), *long_history(6), user(REQUEST), *reasoning_steps(24)])
    summarizer = FakeSummarizer()
    staged = compact_staged(messages, CONFIG, summarizer)
    assert staged.history is not None and staged.loop is not None
    assert loop_follows(staged.history, CONFIG)
    # One summary per segment, in order: the history's before the request, the loop's after.
    summaries = [i for i, m in enumerate(staged.messages) if m.is_summary]
    request = next(i for i, m in enumerate(staged.messages) if m.content == REQUEST)
    assert len(summaries) == 2 and summaries[0] < request < summaries[1]
    assert is_loop_summary(staged.messages[summaries[1]])
    assert not is_loop_summary(staged.messages[summaries[0]])
    assert staged.tokens_after < staged.history.tokens_after < staged.tokens_before
    # Each stage asked with its own prompt.
    assert "Previous" not in summarizer.requests[0].prompt
    assert summarizer.requests[-1].prompts.marker == LOOP_MARKER


def test_the_history_stage_never_summarizes_the_loop() -> None:
    messages = numbered([system(), *long_history(6), user(REQUEST), *reasoning_steps(24)])
    result = compact(messages, CONFIG, FakeSummarizer(), reason="manual")
    request = next(i for i, m in enumerate(messages) if m.content == REQUEST)
    kept = len(messages) - request
    assert result.middle[1] <= request
    assert [m.id for m in messages[request:]] == [m.id for m in result.messages[-kept:]]


def test_manual_forces_the_loop_only_when_the_history_has_nothing() -> None:
    messages = numbered([system(), user(REQUEST), *steps(6, chars=50)])  # under the threshold
    staged = compact_staged(messages, CONFIG, FakeSummarizer(), reason="manual")
    assert staged.history is None and staged.loop is not None and staged.loop.summarized
    with pytest.raises(NothingToCompact):  # auto: under the threshold there is nothing to do
        compact_loop(messages, CONFIG, FakeSummarizer(), reason="manual", keep_recent_steps=6)
    assert not compact_staged(messages, CONFIG, FakeSummarizer()).last.summarized


def test_nothing_in_either_segment() -> None:
    messages = numbered([system(), user(REQUEST), *steps(2)])
    assert first_stage(messages, CONFIG) is None
    with pytest.raises(NothingToCompact):
        compact_staged(messages, CONFIG, FakeSummarizer(), reason="manual")


def test_an_execution_summary_in_the_history_is_read_as_a_turn() -> None:
    """The next request puts the loop's summary in the history: the history stage reads what it
    says (as a turn of the agent's) instead of dropping it."""
    first = compact_loop(session(), CONFIG, FakeSummarizer())
    stored = numbered(first.messages)
    later = [user("Now also update the changelog."), *steps(20, first=200)]
    messages = [*stored, *numbered(later, first=len(stored) + 1)]
    summarizer = FakeSummarizer()
    result = compact(messages, CONFIG, summarizer, reason="manual")
    loop_summary = next(m for m in stored if is_loop_summary(m))
    assert loop_summary.id in result.compressed_ids
    read = "\n".join(r.serialized for r in summarizer.requests)
    assert LOOP_MARKER in read and "[ASSISTANT]" in read
    # The history summary it updates is not there: there was none.
    assert summarizer.requests[0].previous_summary is None
    check_invariants(messages, result)


def test_the_previous_history_summary_is_updated_and_the_loop_one_read() -> None:
    first = compact_staged(
        numbered([system(), *long_history(6), user(REQUEST), *reasoning_steps(24)]),
        CONFIG,
        FakeSummarizer(),
    )
    stored = numbered(first.messages)
    later = [user("Now also update the changelog."), *steps(20, first=300)]
    messages = [*stored, *numbered(later, first=len(stored) + 1)]
    summarizer = FakeSummarizer()
    compact(messages, CONFIG, summarizer, reason="manual")
    request = summarizer.requests[0]
    assert request.previous_summary is not None and LOOP_MARKER not in request.previous_summary
    assert LOOP_MARKER in "\n".join(r.serialized for r in summarizer.requests)
