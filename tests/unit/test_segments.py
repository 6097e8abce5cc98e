"""The four segments recognised from real transcripts, and a gateway's tags winning
(compaction/core/segments.py)."""

from __future__ import annotations

from compaction import CompactionConfig
from compaction.core.loop import compact_loop, is_loop_summary
from compaction.core.messages import Message, last_real_user_index
from compaction.core.segments import SEGMENTS, segment_of, tag_of, tokens_by_segment
from compaction.core.tokens import estimate_tokens
from tests.fakes import FakeSummarizer, load_transcript


def test_a_single_request_tool_loop_is_all_loop_after_the_request() -> None:
    messages = load_transcript("msa_deepseek-chat_astroid-1333")
    found = segment_of(messages)
    assert found[0] == "system"
    assert found[1] == "state"  # the one user request
    assert set(found[2:]) == {"loop"}
    assert len(found) == len(messages) > 300


def test_several_requests_split_history_from_the_latest_one() -> None:
    messages = load_transcript("cc_spotter_258c7280")
    last = last_real_user_index(messages)
    assert last is not None and last > 0
    found = segment_of(messages)
    assert set(found[:last]) == {"history"}  # no system prompt in this transcript
    assert found[last] == "state"
    after = found[last + 1 :]
    assert all(
        s == ("loop" if m.role in ("assistant", "tool") else "state")
        for s, m in zip(after, messages[last + 1 :], strict=True)
    )
    assert "loop" in after


def test_a_summary_counts_as_history_and_a_trailing_note_as_state() -> None:
    messages = [
        Message(role="system", content="rules"),
        Message(role="user", content="[summary] earlier", is_summary=True),
        Message(role="user", content="fix the bug"),
        Message(role="assistant", content="looking"),
        Message(role="system", content="state: 3 files open"),
    ]
    assert segment_of(messages) == ["system", "history", "state", "loop", "state"]
    # The loop's execution summary (a summary after the request) is loop.
    executed = Message(role="user", content="[loop summary] ran 40 steps", is_summary=True)
    assert segment_of([*messages[:3], executed, messages[3]])[3:] == ["loop", "loop"]
    # Only a summary as user message: no real request, everything after the prompt is history.
    assert segment_of(messages[:2]) == ["system", "history"]


def test_tags_win_and_tokens_add_up() -> None:
    messages = load_transcript("openhands_ponyc-4588")
    counts = [estimate_tokens(m) for m in messages]
    plain = tokens_by_segment(messages, counts)
    assert set(plain) == set(SEGMENTS) and sum(plain.values()) == sum(counts)
    assert plain["history"] > 0 and plain["loop"] > 0
    tags = [tag_of({"segment": "history"}) if m.role == "tool" else None for m in messages]
    tagged = tokens_by_segment(messages, counts, tags)
    tool_tokens = sum(c for c, m in zip(counts, messages, strict=True) if m.role == "tool")
    assert tagged["history"] >= tool_tokens
    assert sum(tagged.values()) == sum(counts)
    assert tagged["loop"] < plain["loop"]


def test_only_a_valid_tag_counts() -> None:
    assert tag_of({"segment": "loop"}) == "loop"
    assert tag_of({"segment": "msg2"}) is None
    assert tag_of({"other": 1}) is None
    assert tag_of(None) is None


def test_after_the_loop_stage_its_execution_summary_is_loop() -> None:
    messages = load_transcript("msa_deepseek-chat_pydicom-1139")
    result = compact_loop(messages, CompactionConfig(context_window=16_000), FakeSummarizer())
    assert result.summarized
    found = segment_of(result.messages)
    index = next(i for i, m in enumerate(result.messages) if is_loop_summary(m))
    # The protected head (system, the request, the first step whole) stays before the summary.
    assert index >= CompactionConfig().protect_first_n
    assert found[:2] == ["system", "state"]
    assert set(found[2:]) == {"loop"}
