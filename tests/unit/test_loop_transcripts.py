"""The loop stage on the shared real transcripts with the longest single-request tool loops
(mini-swe-agent, OpenHands, a Claude Code subagent, DeerFlow in Chinese, tau-bench), compacted
with a fake summarizer under budgets that compacting the history alone cannot meet."""

from __future__ import annotations

from dataclasses import replace

import pytest

from compaction import CompactionConfig, compact, estimate_messages_tokens
from compaction.core.loop import RECENT_STEPS, LoopResult, compact_loop, is_loop_summary
from compaction.core.messages import Message, last_real_user_index
from compaction.core.prompts_loop import LOOP
from compaction.core.validate import problems
from tests.fakes import TRANSCRIPT_NAMES, FakeSummarizer, load_transcript
from tests.invariants import check_invariants, new_problems

#: A transcript whose loop (after its last user request) has at least this many messages.
LONG_LOOP = 30


def request_index(messages: list[Message]) -> int:
    index = last_real_user_index(messages)
    assert index is not None
    return index


def loop_length(name: str) -> int:
    """Messages after the transcript's last user request."""
    messages = load_transcript(name)
    return len(messages) - request_index(messages) - 1


LOOPS = [name for name in TRANSCRIPT_NAMES if loop_length(name) >= LONG_LOOP]
#: Transcripts with a real history before the request, for the two stages together.
WITH_HISTORY = ["cc_spotter_ae4a77f8", "openhands_ponyc-4588"]


def test_the_long_loops_are_the_agents_the_issue_names() -> None:
    for prefix in ("msa_", "openhands_", "cc_spotter_", "deerflow_"):
        assert any(name.startswith(prefix) for name in LOOPS), prefix


def loop_config(messages: list[Message]) -> CompactionConfig:
    """A threshold of the system prompt, the request and a third of the loop: over it with no
    history at all, so only the loop stage can bring the session under it."""
    request = request_index(messages)
    system = [m for m in messages if m.role == "system"]
    loop_tokens = estimate_messages_tokens(messages[request + 1 :])
    threshold = estimate_messages_tokens([*system, messages[request]]) + loop_tokens // 3
    config = CompactionConfig(context_window=threshold * 100 // 70 + 1, protect_first_n=1)
    without_history = estimate_messages_tokens([*system, *messages[request:]])
    assert without_history > config.threshold_tokens
    return config


def check_loop(messages: list[Message], result: LoopResult) -> None:
    """Provider-valid, the core's invariants, one execution summary right after the request,
    the request and what precedes it verbatim, the recent steps verbatim and whole."""
    out = result.messages
    assert problems(out, "openai") == new_problems(messages, out) == []
    check_invariants(messages, result)
    request = request_index(messages)
    start, end = result.middle
    assert start == request + 1 and out[:start] == messages[:start]
    assert [m for m in out if is_loop_summary(m)] == [out[start]] == [result.summary_message]
    recent = out[start + 1 :]
    assert recent == messages[end:] and recent[0].role == "assistant"
    assert sum(m.role == "assistant" for m in recent) == result.recent_steps >= RECENT_STEPS
    loop_after = estimate_messages_tokens(out[start:])
    assert loop_after < estimate_messages_tokens(messages[start:])


@pytest.mark.parametrize("name", LOOPS)
def test_loop_compacted_under_a_budget_the_history_cannot_meet(name: str) -> None:
    messages = load_transcript(name)
    summarizer = FakeSummarizer()
    result = compact_loop(messages, loop_config(messages), summarizer)
    assert result.summarized and result.tokens_after < result.tokens_before
    check_loop(messages, result)
    start, end = result.middle
    assert [m for r in summarizer.requests for m in r.messages] == messages[start:end]
    assert result.summary_text.startswith(LOOP.prefix[result.language])


def test_chinese_loop_gets_the_chinese_execution_summary() -> None:
    messages = load_transcript("deerflow_5aa47db1_zh")
    result = compact_loop(messages, loop_config(messages), FakeSummarizer())
    assert result.language == "zh" and result.summary_text.startswith(LOOP.prefix["zh"])


@pytest.mark.parametrize("name", WITH_HISTORY)
def test_history_then_loop_one_summary_per_segment(name: str) -> None:
    messages = load_transcript(name)
    config = loop_config(messages)
    request = request_index(messages)
    history = compact(messages[: request + 1], config, FakeSummarizer(), reason="manual")
    assert history.middle[1] <= request  # the history stage summarized the history only
    staged = [*history.messages, *messages[request + 1 :]]
    assert estimate_messages_tokens(staged) > config.threshold_tokens  # the history is not enough
    result = compact_loop(staged, config, FakeSummarizer())
    check_loop(staged, result)
    summaries = [m for m in result.messages if m.is_summary]
    assert len(summaries) == 2 and not is_loop_summary(summaries[0])
    assert is_loop_summary(summaries[1])
    assert result.messages[result.middle[0] - 1] == messages[request]  # the request, verbatim


def test_the_next_loop_compaction_folds_the_last_one() -> None:
    messages = load_transcript("msa_deepseek-chat_astroid-1333")
    config = loop_config(messages)
    cut = next(
        i for i in range(len(messages) * 3 // 5, len(messages)) if messages[i].role == "assistant"
    )
    first = compact_loop(messages[:cut], config, FakeSummarizer())
    stored = [replace(m, id=m.id or 10_000) for m in first.messages]  # the store gives it an id
    summarizer = FakeSummarizer()
    second = compact_loop([*stored, *messages[cut:]], config, summarizer)
    check_loop([*stored, *messages[cut:]], second)
    assert second.folded_previous and 10_000 in second.compressed_ids
    first_start, first_end = first.middle
    already = {m.id for m in messages[first_start:first_end]}
    seen = {m.id for r in summarizer.requests for m in r.messages}
    assert seen and not seen & already  # nothing summarized twice
    assert all(r.previous_summary for r in summarizer.requests)
