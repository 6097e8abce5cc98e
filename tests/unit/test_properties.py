"""Property-based tests: random well-formed conversations keep every invariant (issue "1 of 5")."""

from __future__ import annotations

import json
from dataclasses import replace

from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from compaction import (
    SUMMARY_MARKER,
    CompactionConfig,
    Message,
    MessageTooLarge,
    NothingToCompact,
    SystemPromptTooLarge,
    ToolCall,
    compact,
    compact_staged,
    compactable,
)
from compaction.core.config import CompactionConfig as Config
from compaction.core.validate import problems
from tests.fakes import FakeSummarizer
from tests.invariants import check_invariants

_texts = st.one_of(
    st.just(""),
    st.text(max_size=60),
    st.text(alphabet=st.characters(min_codepoint=0x4E00, max_codepoint=0x4FFF), max_size=60),
    st.integers(min_value=201, max_value=30_000).map(lambda n: "out " * (n // 4)),
)


@st.composite
def conversations(draw: st.DrawFn) -> list[Message]:
    out: list[Message] = []
    if draw(st.booleans()):
        out.append(Message(role="system", content=draw(st.text(max_size=200))))
    calls = 0
    summary_at = draw(st.integers(min_value=0, max_value=6))
    for turn in range(draw(st.integers(min_value=1, max_value=10))):
        if turn == summary_at and turn > 0 and draw(st.booleans()):
            body = "## Goal\nEarlier work. " + "x" * draw(st.integers(0, 400))
            out.append(Message(role="user", content=f"{SUMMARY_MARKER} {body}"))
        out.append(Message(role="user", content=draw(_texts)))
        for _ in range(draw(st.integers(min_value=0, max_value=3))):
            batch = [
                ToolCall(
                    id=f"c{calls + k}",
                    name="bash",
                    arguments=json.dumps({"command": draw(st.text(max_size=30))}),
                )
                for k in range(draw(st.integers(min_value=1, max_value=3)))
            ]
            calls += len(batch)
            out.append(Message(role="assistant", content=draw(_texts), tool_calls=batch))
            out += [Message(role="tool", content=draw(_texts), tool_call_id=c.id) for c in batch]
        if draw(st.booleans()):
            out.append(Message(role="assistant", content=draw(_texts)))
    return [replace(m, id=i) for i, m in enumerate(out, start=1)]


_configs = st.builds(
    lambda window, threshold, head: CompactionConfig(
        context_window=window, threshold_percent=threshold, protect_first_n=head
    ),
    st.integers(min_value=1_000, max_value=40_000),
    st.sampled_from(range(30, 96, 5)),
    st.integers(min_value=1, max_value=5),
)

_settings = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@_settings
@given(conversations(), _configs)
def test_manual_compaction_keeps_invariants(messages: list[Message], config: Config) -> None:
    assert problems(messages) == []
    try:
        result = compact(messages, config, FakeSummarizer(), reason="manual")
    except (NothingToCompact, MessageTooLarge, SystemPromptTooLarge):
        return
    event(f"summarized, middle of {min(result.removed_count, 10)}+")
    check_invariants(messages, result)
    assert result.summarized


@_settings
@given(conversations(), _configs)
def test_auto_compaction_keeps_invariants(messages: list[Message], config: Config) -> None:
    try:
        result = compact(messages, config, FakeSummarizer(), reason="auto")
    except (NothingToCompact, MessageTooLarge, SystemPromptTooLarge):
        return
    check_invariants(messages, result)
    if not result.summarized:  # an auto request only stops early when it is under the threshold
        assert result.tokens_after < config.threshold_tokens


@_settings
@given(conversations(), st.integers(min_value=1, max_value=10))
def test_a_conversation_within_the_head_never_compacts(messages: list[Message], head: int) -> None:
    short = messages[:head]
    assume(not any(m.is_summary for m in short) and not problems(short))
    config = CompactionConfig(context_window=1_000, protect_first_n=head)
    try:
        compact(short, config, FakeSummarizer(), reason="manual")
    except (NothingToCompact, SystemPromptTooLarge):
        return
    raise AssertionError("a conversation no longer than the protected head was compacted")


@_settings
@given(conversations(), _configs)
def test_compactable_agrees_with_manual_compact(messages: list[Message], config: Config) -> None:
    """What the producers and the worker ask before a run (``compactable``) is what ``/compact``
    does, the history stage and then the loop's: a summary, or nothing_to_compact; with a
    summarizer that always succeeds. A message over the threshold is refused with a code of its
    own, whatever the bounds."""
    try:
        compact_staged(messages, config, FakeSummarizer(), reason="manual")
    except (MessageTooLarge, SystemPromptTooLarge):
        return
    except NothingToCompact:
        summarized = False
    else:
        summarized = True
    event(f"compactable: {summarized}")
    assert compactable(messages, config) is summarized
