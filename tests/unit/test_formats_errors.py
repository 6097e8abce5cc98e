"""What the wire-format parsers refuse (compaction/core/formats.py, compaction/core/messages.py):
the two parsers of the dict form refuse and accept alike; Anthropic's refusals
(docs/architecture.md, "Error codes")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from compaction.core.errors import InvalidRequest
from compaction.core.formats import from_anthropic, from_openai
from compaction.core.messages import Message, ToolCall, messages_from_dicts

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
