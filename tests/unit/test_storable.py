"""Transcript text no database stores (compaction/core/storable.py, ``check_storable``): NUL and
lone surrogates anywhere, the same as JSON escapes in tool-call arguments, arguments nested too
deep, an over-long tool result id; refused with ``invalid_request`` by the dict parser and accepted
when they only look alike. ``storable`` and the ledger never give such text back
(docs/architecture.md, "Error codes")."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compaction.core.errors import InvalidRequest
from compaction.core.identifiers import commands
from compaction.core.ledger import Ledger, extract, render
from compaction.core.messages import Message, ToolCall, messages_from_dicts
from compaction.core.storable import MAX_ARGUMENTS_DEPTH, MAX_TOOL_CALL_ID, check_storable, storable


def call(arguments: Any = "{}", *, call_id: str = "c1", name: str = "bash") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": call_id, "function": {"name": name, "arguments": arguments}}],
    }


def nested(depth: int, inner: str = "1") -> str:
    return "[" * depth + inner + "]" * depth


def deep_list(depth: int) -> list[Any]:
    """Lists nested ``depth`` deep, built without recursion (a gateway's object)."""
    outer: list[Any] = []
    inner = outer
    for _ in range(depth):
        inner.append([])
        inner = inner[0]
    return outer


REFUSED: dict[str, tuple[dict[str, Any], str]] = {
    "nul_content": ({"role": "user", "content": "a\x00"}, "content holds a NUL"),
    "nul_in_a_text_part": (
        {"role": "user", "content": [{"type": "text", "text": "\x00"}]},
        "content holds a NUL",
    ),
    "high_surrogate_content": ({"role": "user", "content": "\ud83d"}, "lone surrogate"),
    "low_surrogate_content": ({"role": "user", "content": "x\ude00y"}, "lone surrogate"),
    "nul_result_id": ({"role": "tool", "content": "", "tool_call_id": "\x00"}, "tool_call_id"),
    "long_result_id": (
        {"role": "tool", "content": "", "tool_call_id": "x" * (MAX_TOOL_CALL_ID + 1)},
        f"over {MAX_TOOL_CALL_ID}",
    ),
    "nul_call_id": (call(call_id="c\x00"), "tool call id holds a NUL"),
    "surrogate_name": (call(name="b\udc00"), "tool call name holds a lone surrogate"),
    "raw_nul_arguments": (call('{"a": "\x00"}'), "arguments holds a NUL"),
    "object_nul_arguments": (call({"a": "\x00"}), "\\u0000 (NUL)"),
    "object_surrogate_arguments": (call({"a": "\ud800"}), "lone surrogate"),
    "escaped_nul": (call('{"a": "\\u0000"}'), "\\u0000 (NUL)"),
    "escaped_high": (call('{"a": "\\uD83D"}'), "\\uD83D (a lone surrogate)"),
    "escaped_low": (call('{"a": "\\ude00"}'), "(a lone surrogate)"),
    "escaped_pair_reversed": (call('{"a": "\\ude00\\ud83d"}'), "(a lone surrogate)"),
    "escaped_two_highs": (call('{"a": "\\ud83d\\ud83d"}'), "\\ud83d (a lone surrogate)"),
    "escaped_after_escaped_backslash": (call('{"a": "\\\\\\u0000"}'), "(NUL)"),
    "deep_text": (call(nested(MAX_ARGUMENTS_DEPTH + 1)), "deeper than"),
    "deep_objects_text": (call('{"a":' * 10_000 + "1" + "}" * 10_000), "deeper than"),
    "deep_object": (call({"x": json.loads(nested(MAX_ARGUMENTS_DEPTH))}), "deeper than"),
    "deep_past_python": (call({"x": deep_list(10_000)}), "deeper than"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_the_dict_parser_refuses_what_no_database_stores(case: str) -> None:
    message, fragment = REFUSED[case]
    with pytest.raises(InvalidRequest) as err:
        messages_from_dicts([{"role": "user", "content": "ok"}, message])
    assert err.value.code == "invalid_request"
    assert err.value.message.startswith("message 1: ")
    assert fragment in err.value.message


ACCEPTED: dict[str, Any] = {
    "escaped_pair": '{"a": "\\ud83d\\ude00"}',
    "escaped_pair_upper": '{"a": "\\uD83D\\uDE00"}',
    "escaped_backslash_then_u0000": '{"path": "C:\\\\u0000"}',
    "an_ordinary_escape": '{"a": "\\u00e9\\u4e2d"}',
    "raw_emoji_and_cjk": '{"a": "😀 中文"}',
    "at_the_depth_limit": nested(MAX_ARGUMENTS_DEPTH),
    "brackets_inside_strings": json.dumps({"code": "[{" * 1_000}),
    "many_shallow_brackets": json.dumps([[i] for i in range(1_000)]),
    "not_json_at_all": "rm -rf [a-z]* {x,y}",
    # A string that never ends takes the brackets after it: json.loads fails on it before
    # any nesting (and the scan stays linear however many escaped quotes it holds).
    "an_unterminated_string": '{"a": "x' + '\\"' * 50_000 + nested(500),
    "an_object": {"a": [{"b": "\\u0000 as text"}]},
}


@pytest.mark.parametrize("case", list(ACCEPTED))
def test_what_only_looks_hostile_is_accepted(case: str) -> None:
    [message] = messages_from_dicts([call(ACCEPTED[case])])
    assert check_storable(message) is message


def test_a_tool_result_id_at_the_limit_is_accepted() -> None:
    result = {"role": "tool", "content": "", "tool_call_id": "x" * MAX_TOOL_CALL_ID}
    assert messages_from_dicts([result])[0].tool_call_id == "x" * MAX_TOOL_CALL_ID


def test_message_objects_are_checked_alike() -> None:
    """The producers append ``Message`` objects: ``check_storable`` refuses them as the
    parser refuses dicts."""
    with pytest.raises(InvalidRequest, match="lone surrogate"):
        check_storable(Message(role="user", content="\udbff"))
    bad_call = ToolCall(id="c", name="f", arguments='["\\u0000"]')
    with pytest.raises(InvalidRequest, match="NUL"):
        check_storable(Message(role="assistant", content="", tool_calls=[bad_call]))


#: Any text, surrogates (which hypothesis leaves out by default) and control characters often.
ANY_TEXT = st.text(st.one_of(st.characters(categories=["Cs", "Cc"]), st.characters()))


@given(ANY_TEXT)
def test_storable_text_is_exactly_what_encodes_without_nul(text: str) -> None:
    try:
        text.encode("utf-8")
        expected = "\x00" not in text
    except UnicodeEncodeError:
        expected = False
    try:
        check_storable(Message(role="user", content=text))
        refused = False
    except InvalidRequest:
        refused = True
    assert refused is not expected
    cleaned = storable(text)
    assert "\x00" not in cleaned and len(cleaned) == len(text)
    cleaned.encode("utf-8")
    if expected:
        assert cleaned == text


JSON_VALUES = st.recursive(
    st.none() | st.integers() | ANY_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(ANY_TEXT, inner, max_size=3),
    max_leaves=8,
)


def texts_of(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [t for item in value for t in texts_of(item)]
    if isinstance(value, dict):
        return [t for k, v in value.items() for t in [k, *texts_of(v)]]
    return []


def encodes_without_nul(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in text


@given(JSON_VALUES, st.booleans())
def test_arguments_are_refused_exactly_when_what_they_decode_to_is_not_storable(
    value: Any, ensure_ascii: bool
) -> None:
    """Against a real JSON encoder: escapes (``ensure_ascii``, surrogate pairs of characters
    past U+FFFF) or raw characters, the arguments pass when the ledger's ``json.loads`` gives
    text the database stores, and only then."""
    arguments = json.dumps(value, ensure_ascii=ensure_ascii)
    decoded = json.loads(arguments)
    storable_ = encodes_without_nul(arguments) and all(map(encodes_without_nul, texts_of(decoded)))
    call = ToolCall(id="c", name="f", arguments=arguments)
    try:
        check_storable(Message(role="assistant", content="", tool_calls=[call]))
        accepted = True
    except InvalidRequest:
        accepted = False
    assert accepted is storable_


def test_commands_skip_arguments_nested_past_the_decoder() -> None:
    """Rows stored before the depth check: the ledger leaves them out instead of failing."""
    deep = ToolCall(id="c", name="bash", arguments='{"command": "ls", "x": ' + nested(10_000))
    fine = ToolCall(id="d", name="bash", arguments='{"command": "make"}')
    assert list(commands([deep, fine])) == ["make"]


def test_the_ledger_never_emits_what_the_database_refuses() -> None:
    """Commands decoded from escapes, and error lines of rows stored before the check."""
    stored = [
        Message(role="user", content="go"),
        Message(
            role="assistant",
            content="",
            tool_calls=[
                ToolCall(id="a", name="bash", arguments='{"command": "echo \\u0000 x"}'),
                ToolCall(id="b", name="bash", arguments='{"command": "echo \\ud800 y"}'),
            ],
        ),
        Message.from_trusted("tool", "Error: disk\x00 full", [], "a", None),
    ]
    text = render(Ledger(items=extract(stored)), "en")
    assert "echo \ufffd x" in text and "echo \ufffd y" in text
    assert "Error: disk\ufffd full" in text
    assert "\x00" not in text
    text.encode("utf-8")
