"""OpenAI's wire format <-> Message (compaction/core/formats.py): reading and writing it, and
round trips. Anthropic's: test_formats_anthropic.py; refused input: test_formats_errors.py."""

from __future__ import annotations

from typing import Any

from compaction.core.formats import from_openai, to_openai
from compaction.core.messages import Message, ToolCall
from tests.unit.builders import call

Wire = list[dict[str, Any]]


# --------------------------------------------------------------------------- OpenAI in


def test_from_openai_roles_and_developer() -> None:
    out = from_openai(
        [
            {"role": "developer", "content": "be brief"},
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None},
        ]
    )
    assert [m.role for m in out] == ["system", "system", "user", "assistant"]
    assert out[0].content == "be brief"
    assert out[3].content == ""


def test_from_openai_content_parts() -> None:
    out = from_openai(
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "look at"},
                    {"type": "image_url", "image_url": {"url": "data:..."}},
                    {"type": "input_image", "image_url": "data:..."},
                    {"type": "input_audio", "input_audio": {}},
                    {"type": "text", "text": "please"},
                ],
            }
        ]
    )
    assert out[0].content == "look at\n[image]\n[image]\n[input_audio]\nplease"


def test_from_openai_tool_calls_nested_flat_and_dict_arguments() -> None:
    out = from_openai(
        [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "a",
                        "type": "function",
                        "function": {"name": "read", "arguments": '{"path": "x"}'},
                    },
                    {
                        "id": "b",
                        "type": "function",
                        "function": {"name": "grep", "arguments": {"q": "héllo 你好"}},
                    },
                    {"id": "c", "name": "ls", "arguments": ""},
                ],
            },
            {"role": "tool", "tool_call_id": "a", "content": "x body"},
        ]
    )
    assert out[0].tool_calls == [
        ToolCall("a", "read", '{"path": "x"}'),
        ToolCall("b", "grep", '{"q": "héllo 你好"}'),
        ToolCall("c", "ls", ""),
    ]
    assert out[1] == Message(role="tool", content="x body", tool_call_id="a")


def test_from_openai_keeps_integer_id_only() -> None:
    out = from_openai(
        [
            {"role": "user", "content": "a", "id": 7},
            {"role": "user", "content": "b", "id": "msg_1"},
            {"role": "user", "content": "c", "id": True},
        ]
    )
    assert [m.id for m in out] == [7, None, None]


# --------------------------------------------------------------------------- OpenAI out


def test_to_openai_shape() -> None:
    msgs = [
        Message(role="assistant", content="", tool_calls=[call({"x": 1}, "f", "a")], id=3),
        Message(role="tool", content="short", tool_call_id="a", original_content="long"),
    ]
    assert to_openai(msgs) == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}}
            ],
        },
        {"role": "tool", "content": "short", "tool_call_id": "a"},
    ]


def test_openai_round_trip_with_parallel_calls() -> None:
    wire: list[dict[str, Any]] = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "do two things"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "a", "arguments": '{"k": 1}'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "b", "arguments": '{"k": "ü"}'},
                },
            ],
        },
        {"role": "tool", "content": "one", "tool_call_id": "call_1"},
        {"role": "tool", "content": "two", "tool_call_id": "call_2"},
        {
            "role": "assistant",
            "content": "thinking aloud",
            "tool_calls": [
                {"id": "call_3", "type": "function", "function": {"name": "c", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "content": "", "tool_call_id": "call_3"},
        {"role": "assistant", "content": "done"},
    ]
    assert to_openai(from_openai(wire)) == wire


def test_openai_round_trip_normalises_content() -> None:
    wire: Wire = [
        {"role": "user", "content": None},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "x", "type": "function", "function": {"name": "f", "arguments": ""}}
            ],
        },
    ]
    back = to_openai(from_openai(wire))
    assert back[0]["content"] == ""
    assert back[1]["content"] is None
