"""Provider rules a message list must satisfy (compaction/core/validate.py; docs/architecture.md,
"The algorithm", phase 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compaction.core.errors import InvalidRequest
from compaction.core.messages import messages_from_dicts
from compaction.core.validate import ensure_valid, problems
from tests.fakes import TRANSCRIPTS
from tests.unit.builders import assistant, convo, summary, system, tool, user

TRANSCRIPT_FILES = sorted(TRANSCRIPTS.glob("*.json"))


# --------------------------------------------------------------------------- valid lists


def test_valid_list_with_parallel_tool_calls() -> None:
    messages = [
        system(),
        user("fix the bug"),
        assistant("looking", "c1", "c2", "c3"),
        tool("b", "c2"),  # results may come in any order
        tool("a", "c1"),
        tool("c", "c3"),
        assistant("now the test", "c4"),
        tool("passed", "c4"),
        assistant("done"),
        user("thanks"),
    ]
    for provider in ("openai", "anthropic", "both"):
        assert problems(messages, provider) == []
    ensure_valid(messages)


@pytest.mark.parametrize(
    "spec",
    ["", "S", "S S", "U", "S U A U A", "U A:c1 T:c1 A", "S U Z A:c1 T:c1 U"],
)
def test_valid_small_lists(spec: str) -> None:
    assert problems(convo(spec)) == []


def test_default_provider_is_both() -> None:
    messages = convo("A U")
    assert problems(messages) == problems(messages, "both") != []


# --------------------------------------------------------------------------- tool pairing


def test_tool_result_with_no_preceding_call() -> None:
    messages = [user(), tool(call_id="c1")]
    assert problems(messages) == [
        "message 1: tool result 'c1' answers no call of the assistant turn before it"
    ]


def test_tool_result_answering_an_unknown_id() -> None:
    messages = convo("U A:c1 T:c1 T:c2")
    assert problems(messages) == [
        "message 3: tool result 'c2' answers no call of the assistant turn before it"
    ]


def test_result_separated_from_its_call_by_a_user_message() -> None:
    messages = convo("U A:c1 U T:c1")
    assert problems(messages, "openai") == [
        "message 1: tool call 'c1' has no result",
        "message 3: tool result 'c1' answers no call of the assistant turn before it",
    ]


def test_result_separated_from_its_call_by_an_assistant_message() -> None:
    messages = convo("U A:c1 A T:c1")
    found = problems(messages, "openai")
    assert "message 1: tool call 'c1' has no result" in found
    assert any(p.startswith("message 3: tool result 'c1'") for p in found)


def test_unanswered_call_mid_list() -> None:
    messages = convo("U A:c1,c2 T:c1 U A")
    assert problems(messages) == ["message 1: tool call 'c2' has no result"]


def test_unanswered_call_at_the_end() -> None:
    messages = convo("U A A:c1")
    assert problems(messages) == ["message 2: tool call 'c1' has no result"]


def test_two_unanswered_calls_are_both_reported() -> None:
    messages = convo("U A:c1,c2 U")
    assert problems(messages) == [
        "message 1: tool call 'c1' has no result",
        "message 1: tool call 'c2' has no result",
    ]


def test_duplicate_call_ids_across_turns() -> None:
    messages = convo("U A:c1 T:c1 A:c1 T:c1")
    assert problems(messages) == ["message 3: duplicate tool call id 'c1'"]


def test_duplicate_call_ids_within_one_turn() -> None:
    messages = convo("U A:c1,c1 T:c1 T:c1")
    found = problems(messages)
    assert "message 1: duplicate tool call id 'c1'" in found


# --------------------------------------------------------------------------- anthropic


def test_first_non_system_message_from_the_assistant() -> None:
    messages = convo("S A U A")
    expected = ["message 1: the first non-system message must be the user's"]
    assert problems(messages, "anthropic") == expected
    assert problems(messages, "both") == expected
    assert problems(messages, "openai") == []


def test_first_message_is_a_tool_result() -> None:
    found = problems([tool(call_id="c1")], "anthropic")
    assert "message 0: the first non-system message must be the user's" in found


def test_system_message_after_the_conversation_started() -> None:
    messages = convo("S U A S U")
    expected = ["message 3: a system message after the conversation started"]
    assert problems(messages, "anthropic") == expected
    assert problems(messages, "both") == expected
    assert problems(messages, "openai") == []


def test_summary_counts_as_the_users_first_message() -> None:
    assert problems([system(), summary(), assistant("ok")], "anthropic") == []


def test_openai_skips_only_the_anthropic_rules() -> None:
    messages = convo("S A:c1 U S")
    assert problems(messages, "openai") == ["message 1: tool call 'c1' has no result"]
    assert problems(messages, "anthropic") == [
        "message 1: tool call 'c1' has no result",
        "message 1: the first non-system message must be the user's",
        "message 3: a system message after the conversation started",
    ]


# --------------------------------------------------------------------------- ensure_valid


def test_ensure_valid_passes_silently() -> None:
    ensure_valid(convo("S U A:c1 T:c1 A"))  # no error


def test_ensure_valid_names_the_first_problem() -> None:
    messages = convo("U T:c9 A:c1")
    with pytest.raises(InvalidRequest) as info:
        ensure_valid(messages)
    err = info.value
    assert err.code == "invalid_request"
    assert isinstance(err, ValueError)
    assert str(err) == (
        "invalid conversation: message 1: tool result 'c9' answers no call of the assistant "
        "turn before it (and 1 more)"
    )


def test_ensure_valid_single_problem_has_no_more_suffix() -> None:
    with pytest.raises(InvalidRequest) as info:
        ensure_valid(convo("S A"), "anthropic")
    assert str(info.value) == (
        "invalid conversation: message 1: the first non-system message must be the user's"
    )


def test_ensure_valid_respects_provider() -> None:
    ensure_valid(convo("S A"), "openai")
    with pytest.raises(InvalidRequest):
        ensure_valid(convo("S A"), "both")


# --------------------------------------------------------------------------- real transcripts


def test_transcripts_are_present() -> None:
    assert len(TRANSCRIPT_FILES) >= 5


@pytest.mark.parametrize("path", TRANSCRIPT_FILES, ids=lambda p: p.stem)
def test_real_transcripts_are_valid_for_openai(path: Path) -> None:
    with path.open(encoding="utf-8") as handle:
        messages = messages_from_dicts(json.load(handle))
    assert messages
    assert problems(messages, "openai") == []
