"""Provider wire formats <-> Message (compaction/formats.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from compaction.errors import InvalidRequest
from compaction.formats import from_anthropic, from_openai, to_anthropic, to_openai
from compaction.messages import Message, ToolCall, messages_from_dicts
from tests.fakes import TRANSCRIPTS
from tests.unit.builders import call

TRANSCRIPT_FILES = sorted(TRANSCRIPTS.glob("*.json"))


Wire = list[dict[str, Any]]


def reverse(pair: tuple[str | None, Wire]) -> tuple[Wire, str | None]:
    """to_anthropic returns (system, messages); from_anthropic takes (messages, system)."""
    system, messages = pair
    return messages, system


def anthropic_round_trip(messages: list[Message]) -> list[Message]:
    return from_anthropic(*reverse(to_anthropic(messages)))


def args(value: dict[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False)


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


# --------------------------------------------------------------------------- errors


DICT_ERRORS: list[tuple[list[Any], str]] = [
    (
        [{"role": "user", "content": "ok"}, {"role": "foo", "content": "x"}],
        "message 1: unknown role 'foo'",
    ),
    ([{"content": "x"}], "message 0: unknown role None"),
    ([{"role": "user", "content": 3}], "message 0: content must be"),
    ([{"role": "user", "content": {"text": "x"}}], "message 0: content must be"),
    ([{"role": "user", "content": ["bare string"]}], "content part must be an object"),
    ([{"role": "user", "content": [{"text": "x"}]}], "needs a string 'type'"),
    ([{"role": "user", "content": [{"type": "text", "text": 1}]}], "text part must hold"),
    ([{"role": "tool", "content": "x"}], "message 0: a tool message needs a tool_call_id"),
    ([{"role": "tool", "content": "x", "tool_call_id": 5}], "tool_call_id must be a string"),
    ([{"role": "assistant", "content": "", "tool_calls": {}}], "tool_calls must be a list"),
    ([{"role": "assistant", "content": "", "tool_calls": ["x"]}], "a tool call must be an object"),
    (
        [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "a", "function": {"name": "f", "arguments": 3}}],
            }
        ],
        "arguments must be",
    ),
    (
        [{"role": "user", "content": "x", "tool_calls": [{"id": "a", "name": "f"}]}],
        "only assistant messages",
    ),
    (["not an object"], "message 0: a message must be an object"),
    # Accepted by Message.from_dict before the two parsers shared one path:
    ([{"role": "assistant", "content": "", "tool_calls": ""}], "tool_calls must be a list"),
    ([{"role": "user", "content": "x", "tool_call_id": 5}], "tool_call_id must be a string"),
    (
        [{"role": "assistant", "content": "", "tool_calls": [{"id": "a", "arguments": 0}]}],
        "message 0: tool call arguments must be a string, null or an object, got int",
    ),
    (
        [{"role": "assistant", "content": "", "tool_calls": [{"id": "a", "arguments": []}]}],
        "tool call arguments must be",
    ),
    ([{"role": "assistant", "content": "", "tool_calls": [{"id": 1}]}], "tool call id must be"),
    ([{"role": "tool", "content": "x", "tool_call_id": ""}], "needs a tool_call_id"),
]

#: The two parsers of the dict form: the transcripts' (and the store's) and OpenAI's.
DICT_PARSERS = {"messages_from_dicts": messages_from_dicts, "from_openai": from_openai}


@pytest.mark.parametrize("parse", DICT_PARSERS.values(), ids=list(DICT_PARSERS))
@pytest.mark.parametrize(("items", "fragment"), DICT_ERRORS)
def test_dict_parsers_refuse_alike(
    parse: Callable[[list[Any]], list[Message]], items: list[Any], fragment: str
) -> None:
    with pytest.raises(InvalidRequest) as info:
        parse(items)
    assert info.value.code == "invalid_request"
    assert fragment in info.value.message


#: Dicts that ``Message.from_dict`` refused or read otherwise than ``from_openai`` did.
DICTS_ONCE_APART: list[tuple[dict[str, Any], Message]] = [
    ({"role": "developer", "content": "be brief"}, Message(role="system", content="be brief")),
    ({"role": "assistant", "content": None}, Message(role="assistant", content="")),
    (
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image_url"}]},
        Message(role="user", content="a\n[image]"),
    ),
    (
        {"role": "assistant", "content": "", "tool_calls": [{"id": "a", "arguments": {"k": 1}}]},
        Message(role="assistant", content="", tool_calls=[ToolCall("a", "", '{"k": 1}')]),
    ),
    ({"role": "user", "content": "x", "id": "msg_1"}, Message(role="user", content="x")),
    ({"role": "user", "content": "x", "id": 4, "name": "al"}, Message("user", "x", id=4)),
]


@pytest.mark.parametrize("parse", DICT_PARSERS.values(), ids=list(DICT_PARSERS))
@pytest.mark.parametrize(("item", "expected"), DICTS_ONCE_APART)
def test_dict_parsers_accept_alike(
    parse: Callable[[list[Any]], list[Message]], item: dict[str, Any], expected: Message
) -> None:
    assert parse([item]) == [expected]
    assert Message.from_dict(item) == expected


ANTHROPIC_ERRORS: list[tuple[list[Any], Any, str]] = [
    ([{"role": "system", "content": "x"}], None, "message 0: unknown role 'system'"),
    (
        [{"role": "user", "content": "a"}, {"role": "tool", "content": "x"}],
        None,
        "message 1: unknown role 'tool'",
    ),
    ([{"role": "user", "content": 5}], None, "content must be a string or a list"),
    ([{"role": "user", "content": ["x"]}], None, "content part must be an object"),
    (
        [{"role": "user", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}]}],
        None,
        "tool_use blocks belong in assistant",
    ),
    (
        [{"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "a"}]}],
        None,
        "tool_result blocks belong in user",
    ),
    (
        [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": 1}]}],
        None,
        "tool_result content must be",
    ),
    (
        [{"role": "user", "content": [{"type": "tool_result", "content": "x"}]}],
        None,
        "needs a tool_call_id",
    ),
    (
        [
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "a", "name": "f", "input": [1]}],
            }
        ],
        None,
        "arguments must be",
    ),
    ([], 42, "system must be"),
    ([], [{"type": "text", "text": 1}], "system: text part must hold"),
]


@pytest.mark.parametrize(("messages", "system", "fragment"), ANTHROPIC_ERRORS)
def test_from_anthropic_errors(messages: list[Any], system: Any, fragment: str) -> None:
    with pytest.raises(InvalidRequest) as info:
        from_anthropic(messages, system)
    assert info.value.code == "invalid_request"
    assert fragment in info.value.message


# --------------------------------------------------------------------------- real transcripts


def test_transcripts_present() -> None:
    assert TRANSCRIPT_FILES, f"no transcripts under {TRANSCRIPTS}"


@pytest.mark.parametrize("path", TRANSCRIPT_FILES, ids=lambda p: p.stem)
def test_transcript_round_trips(path: Path) -> None:
    msgs = messages_from_dicts(json.loads(path.read_text(encoding="utf-8")))
    assert from_openai(to_openai(msgs)) == msgs

    system, wire = to_anthropic(msgs)
    back = from_anthropic(wire, system)
    systems = [m for m in msgs if m.role == "system"]
    if systems:
        assert system is not None
        assert all(m.content in system for m in systems)
        assert back[0] == Message(role="system", content=system)
        back = back[1:]
    rest = [m for m in msgs if m.role != "system"]
    assert [(m.role, m.content, m.tool_call_id) for m in back] == [
        (m.role, m.content, m.tool_call_id) for m in rest
    ]
    assert [[(c.id, c.name) for c in m.tool_calls] for m in back] == [
        [(c.id, c.name) for c in m.tool_calls] for m in rest
    ]
