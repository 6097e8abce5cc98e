"""Anthropic's wire format <-> Message (compaction/core/formats.py): the system prompt, content
blocks, tool results, and round trips. OpenAI's: test_formats_openai.py."""

from __future__ import annotations

from typing import Any

from compaction.core.formats import from_anthropic, to_anthropic
from compaction.core.messages import Message, ToolCall
from tests.unit.builders import call

Wire = list[dict[str, Any]]


def reverse(pair: tuple[str | None, Wire]) -> tuple[Wire, str | None]:
    """to_anthropic returns (system, messages); from_anthropic takes (messages, system)."""
    system, messages = pair
    return messages, system


def anthropic_round_trip(messages: list[Message]) -> list[Message]:
    return from_anthropic(*reverse(to_anthropic(messages)))


# --------------------------------------------------------------------------- Anthropic in


def test_from_anthropic_system_string_and_blocks() -> None:
    assert from_anthropic([{"role": "user", "content": "hi"}], system="sys") == [
        Message(role="system", content="sys"),
        Message(role="user", content="hi"),
    ]
    out = from_anthropic([], system=[{"type": "text", "text": "a"}, {"type": "text", "text": "b"}])
    assert out == [Message(role="system", content="a\nb")]
    assert from_anthropic([], system=None) == []
    assert from_anthropic([], system="") == []


def test_from_anthropic_assistant_blocks() -> None:
    out = from_anthropic(
        [
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hmm", "signature": "s"},
                    {"type": "redacted_thinking", "data": "xx"},
                    {"type": "text", "text": "first"},
                    {"type": "tool_use", "id": "t1", "name": "read", "input": {"path": "é"}},
                    {"type": "text", "text": "second"},
                    {"type": "tool_use", "id": "t2", "name": "ls", "input": {}},
                ],
            }
        ]
    )
    assert out == [
        Message(
            role="assistant",
            content="first\nsecond",
            tool_calls=[ToolCall("t1", "read", '{"path": "é"}'), ToolCall("t2", "ls", "{}")],
        )
    ]


def test_from_anthropic_thinking_only_gives_empty_assistant() -> None:
    thinking = {"type": "thinking", "thinking": "x"}
    out = from_anthropic([{"role": "assistant", "content": [thinking]}])
    assert out == [Message(role="assistant", content="")]


def test_from_anthropic_tool_results_and_error_prefix() -> None:
    out = from_anthropic(
        [
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "plain"},
                    {
                        "type": "tool_result",
                        "tool_use_id": "t2",
                        "content": [
                            {"type": "text", "text": "a"},
                            {"type": "image", "source": {}},
                            {"type": "text", "text": "b"},
                        ],
                    },
                    {
                        "type": "tool_result",
                        "tool_use_id": "t3",
                        "content": "boom",
                        "is_error": True,
                    },
                    {"type": "tool_result", "tool_use_id": "t4"},
                ],
            }
        ]
    )
    assert out == [
        Message(role="tool", content="plain", tool_call_id="t1"),
        Message(role="tool", content="a\n[image]\nb", tool_call_id="t2"),
        Message(role="tool", content="[error] boom", tool_call_id="t3"),
        Message(role="tool", content="", tool_call_id="t4"),
    ]


def test_from_anthropic_mixed_user_message_orders_tools_first() -> None:
    out = from_anthropic(
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "also, "},
                    {"type": "tool_result", "tool_use_id": "t1", "content": "r1"},
                    {"type": "image", "source": {}},
                    {"type": "tool_result", "tool_use_id": "t2", "content": "r2"},
                ],
            }
        ]
    )
    assert out == [
        Message(role="tool", content="r1", tool_call_id="t1"),
        Message(role="tool", content="r2", tool_call_id="t2"),
        Message(role="user", content="also, \n[image]"),
    ]


def test_from_anthropic_user_text_blocks_and_empty_list() -> None:
    out = from_anthropic(
        [
            {
                "role": "user",
                "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            },
            {"role": "user", "content": []},
        ]
    )
    assert out == [Message(role="user", content="a\nb"), Message(role="user", content="")]


# --------------------------------------------------------------------------- Anthropic out


def test_to_anthropic_shape() -> None:
    msgs = [
        Message(role="system", content="one"),
        Message(role="user", content="hi"),
        Message(
            role="assistant",
            content="",
            tool_calls=[
                ToolCall("a", "f", ""),
                ToolCall("b", "g", "not json"),
                ToolCall("c", "h", "[1]"),
            ],
        ),
        Message(role="tool", content="ra", tool_call_id="a"),
        Message(role="system", content="two"),
        Message(role="tool", content="rb", tool_call_id="b"),
        Message(role="tool", content="rc", tool_call_id="c"),
        Message(role="user", content="next"),
        Message(role="user", content="again"),
    ]
    system, out = to_anthropic(msgs)
    assert system == "one\n\ntwo"
    assert out == [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "a", "name": "f", "input": {}},
                {"type": "tool_use", "id": "b", "name": "g", "input": {"_raw": "not json"}},
                {"type": "tool_use", "id": "c", "name": "h", "input": {"_raw": "[1]"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "a", "content": "ra"},
                {"type": "tool_result", "tool_use_id": "b", "content": "rb"},
                {"type": "tool_result", "tool_use_id": "c", "content": "rc"},
                {"type": "text", "text": "next"},
            ],
        },
        {"role": "user", "content": "again"},
    ]


def test_to_anthropic_no_system_and_text_before_tool_use() -> None:
    system, out = to_anthropic(
        [Message(role="assistant", content="let me look", tool_calls=[call({"x": 1}, "f", "a")])]
    )
    assert system is None
    assert out == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "let me look"},
                {"type": "tool_use", "id": "a", "name": "f", "input": {"x": 1}},
            ],
        }
    ]


def test_to_anthropic_results_after_user_text_start_a_new_message() -> None:
    # tool_result blocks must lead a user message, so results after merged text open a new one
    _, out = to_anthropic(
        [
            Message(role="tool", content="r1", tool_call_id="a"),
            Message(role="user", content="text"),
            Message(role="tool", content="r2", tool_call_id="b"),
        ]
    )
    assert [len(m["content"]) for m in out] == [2, 1]


def test_to_anthropic_drops_empty_user_text_after_results() -> None:
    # Known loss: Anthropic rejects empty text blocks, so this user turn cannot survive.
    msgs = [Message(role="tool", content="r", tool_call_id="a"), Message(role="user", content="")]
    assert to_anthropic(msgs)[1] == [
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "r"}]}
    ]
    assert anthropic_round_trip(msgs) == msgs[:1]


def test_anthropic_round_trip() -> None:
    msgs = [
        Message(role="system", content="you are helpful"),
        Message(role="user", content="fix the bug"),
        Message(
            role="assistant",
            content="looking",
            tool_calls=[
                call({"path": "a.py"}, "read", "t1"),
                call({"q": "ünïcode 中文"}, "grep", "t2"),
            ],
        ),
        Message(role="tool", content="contents", tool_call_id="t1"),
        Message(role="tool", content="[error] no match", tool_call_id="t2"),
        Message(role="user", content="hurry"),
        Message(role="assistant", content="", tool_calls=[call({"n": [1, 2]}, "write", "t3")]),
        Message(role="tool", content="", tool_call_id="t3"),
        Message(role="assistant", content="done"),
        Message(role="user", content="thanks"),
    ]
    assert anthropic_round_trip(msgs) == msgs
