"""``compact()``'s errors, each with its stable code (docs/architecture.md, "Error codes")."""

from __future__ import annotations

import pytest

from compaction import (
    CompactionConfig,
    InvalidRequest,
    Message,
    NothingToCompact,
    SummaryTooLong,
    SummaryTooShort,
    SystemPromptTooLarge,
    compact,
)
from tests.fakes import SMALL, FakeSummarizer, conversation
from tests.unit.builders import assistant, call, convo, system, tool, user


def test_system_prompt_too_large() -> None:
    messages = [Message(role="system", content="s" * 20_000), *conversation(3, system=False)]
    with pytest.raises(SystemPromptTooLarge) as err:
        compact(messages, CompactionConfig(context_window=5_000), FakeSummarizer(), reason="manual")
    assert err.value.code == "system_prompt_too_large"


@pytest.mark.parametrize("reason", ["auto", "manual"])
def test_a_kept_message_alone_over_the_threshold_is_compacted_around(reason: str) -> None:
    """docs/algorithm.md, "Bounds": kept whole where it must be kept, the rest summarized."""
    huge = Message(role="user", content="p" * 200_000, id=99)
    messages = [*conversation(6), huge]
    summarizer = FakeSummarizer()
    config = CompactionConfig(context_window=20_000)
    result = compact(messages, config, summarizer, reason=reason)  # type: ignore[arg-type]
    assert result.summarized and len(summarizer.requests) == 1
    assert result.messages[-1] == huge and result.removed_count > 0
    assert result.tokens_after < result.tokens_before


def test_nothing_to_compact_for_a_short_conversation() -> None:
    with pytest.raises(NothingToCompact) as err:
        compact(conversation(1), SMALL, FakeSummarizer(), reason="manual")
    assert err.value.code == "nothing_to_compact"


@pytest.mark.parametrize(
    "spec",
    [
        "S U A:c1 T:c1 A",  # conversation(1): the head (moved past T:c1) and one message
        "S U A U A A",  # the head and the minimal tail, nothing between
        "S U A A U A A",  # one message between: not worth a summary
        "S U A:c1,c2 T:c1 T:c2 A U A",  # the head grows over the call's results
        "S Z U A A",  # between head and tail only an earlier summary
    ],
)
def test_nothing_to_compact_with_only_head_and_minimal_tail(spec: str) -> None:
    """At default settings (issue 12, "/compact always compacts"): only a conversation with
    nothing between its protected head and its minimal tail answers nothing_to_compact."""
    summarizer = FakeSummarizer()
    with pytest.raises(NothingToCompact):
        compact(convo(spec), CompactionConfig(), summarizer, reason="manual")
    assert summarizer.requests == []


def test_manual_compacts_when_more_than_head_tail_and_last_user_remain() -> None:
    """Head (S U A), minimal tail (3) and the last user message leave three messages. Phase 1
    prunes the big result, so the tokens would grow the head past the user message and leave
    one message: the tail moves back instead, and the call and its result are summarized."""
    messages = [
        system("sys"),
        user("hi"),
        assistant("a"),
        assistant("", call(id_="c1")),
        tool("o " * 60_000, "c1"),  # ~30k tokens, pruned: outside the 28k tail budget
        user("next"),
        assistant("w " * 58_000),  # ~29k tokens: the tail budget stops after it
        *(assistant(text) for text in "xyz"),
    ]
    result = compact(messages, CompactionConfig(), FakeSummarizer(), reason="manual")
    assert result.summarized and result.middle == (3, 5)


@pytest.mark.parametrize("text", ["", "   ", "too short " * 19])
def test_summary_too_short(text: str) -> None:
    with pytest.raises(SummaryTooShort) as err:
        compact(conversation(10), SMALL, FakeSummarizer(text=text), reason="manual")
    assert err.value.code == "summary_too_short"


def test_min_summary_chars_travels_with_the_request() -> None:
    """The summarizer gets the config's minimum, so the worker's fallback decides on the rule
    the engine applies (``SummaryRequest.accepted``)."""
    lenient = CompactionConfig(context_window=4_000, min_summary_chars=10)
    fake = FakeSummarizer(text="ten chars!")
    assert compact(conversation(10), lenient, fake, reason="manual").summarized
    request = fake.requests[0]
    assert request.min_chars == 10
    assert request.accepted("  ten chars!\n") == "ten chars!"
    with pytest.raises(SummaryTooShort):
        request.accepted("  nine ch  ")
    with pytest.raises(SummaryTooShort, match="9 characters, under the minimum of 10"):
        compact(conversation(10), lenient, FakeSummarizer(text=" nine char"), reason="manual")


def test_summary_too_long() -> None:
    # Twice summary_max_tokens (2 x 12,000) and one more token (4 characters each).
    text = "## Goal\n" + "w" * (4 * 24_001)
    summarizer = FakeSummarizer(text=text)
    with pytest.raises(SummaryTooLong, match="over twice summary_max_tokens") as err:
        compact(conversation(10), SMALL, summarizer, reason="manual")
    assert err.value.code == "summary_too_long"
    request = summarizer.requests[0]
    assert request.max_tokens == 24_000
    assert request.accepted(text[: 4 * 24_000]) == text[: 4 * 24_000]  # at the limit: kept
    with pytest.raises(SummaryTooLong):
        request.accepted(text)


def test_the_limit_counts_with_the_config_estimator() -> None:
    # CJK characters count a token each: 5,000 of them are over twice 2,000.
    config = CompactionConfig(context_window=4_000, summary_max_tokens=2_000)
    with pytest.raises(SummaryTooLong):
        compact(conversation(10), config, FakeSummarizer(text="摘" * 5_000), reason="manual")
    assert compact(conversation(10), config, FakeSummarizer(text="摘" * 4_000), reason="manual")


def test_summarizer_reply_without_text_is_a_failure() -> None:
    class Broken:
        def summarize(self, request: object) -> object:
            return object()

    with pytest.raises(SummaryTooShort):
        compact(conversation(10), SMALL, Broken(), reason="manual")


def test_a_summarizer_is_required_for_phase_three() -> None:
    with pytest.raises(InvalidRequest):
        compact(conversation(10), SMALL, None, reason="manual")
