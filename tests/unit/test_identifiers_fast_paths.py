"""The shortcuts of ``compaction/core/identifiers.py`` and ``redact_many`` give what the plain way
gives: tool-call arguments decoded only when a command key can be in them, ids and values from
one regex led by the character before them, the error hints that share "rror" found by one
search, nothing joined when no rule runs."""

from __future__ import annotations

import pytest

from compaction.core.identifiers import commands, error_lines, scan
from compaction.core.messages import ToolCall
from compaction.core.redact import redact_many


def _commands(arguments: str) -> list[str]:
    return list(commands([ToolCall(id="c1", name="bash", arguments=arguments)]))


def test_command_key_spelled_with_an_escape_is_still_found() -> None:
    # No quoted "command" in the text: the \u escape is why it is decoded.
    assert _commands('{"comm\\u0061nd": "ls -la", "note": "run a command"}') == ["ls -la"]


@pytest.mark.parametrize(
    "arguments",
    [
        '{"path": "a.html", "content": "<script src=x.js></script>"}',
        '{"note": "\\"command\\" is a word here"}',
        '{"comm\\u0061nd": "ls -la"}',  # never decoded: not even the word is there
    ],
)
def test_no_command_where_no_key_is(arguments: str) -> None:
    assert _commands(arguments) == []


@pytest.mark.parametrize(
    ("words", "ids", "values"),
    [
        (["abc1234"], ["abc1234"], []),  # an id that starts the text
        (["deadbeef1", "v1.2.3", "$5"], ["deadbeef1"], ["v1.2.3", "$5"]),
        (["1234567", "ABCDEFG", "abc1234"], ["abc1234"], []),  # a count, a word: no ids
        (["1234567.1.2"], [], []),  # taken as a count first: not tried as a version
        (["x=€", "1,000.50"], [], ["€ 1,000.50"]),  # an amount after its sign's word
        (["中文", "v2.0.1-rc1"], [], ["v2.0.1-rc1"]),
    ],
)
def test_ids_and_values(words: list[str], ids: list[str], values: list[str]) -> None:
    found = scan(words)
    assert (found["ids"], found["values"]) == (ids, values)


def test_redact_many_without_rules_returns_the_texts() -> None:
    texts = ["token abcdefghijklmnop1234", "b"]
    out = redact_many(texts, ())
    assert out == texts
    assert out is not texts


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        (
            "ValueError: x\nan error: y\nerror[E0308]: z",
            ["ValueError: x", "an error: y", "error[E0308]: z"],
        ),
        ("Errors pile up\nterror\nerror [x]\nMyError2 here", []),  # no hint in any line
        ("an Error, ok", ["an Error, ok"]),
    ],
)
def test_error_hints_sharing_rror(text: str, lines: list[str]) -> None:
    assert list(error_lines(text)) == lines


def test_error_quoted_once_where_two_hints_start_it() -> None:
    # "Error" and "rror:" both in "ValueError:": one quote, from the start of the word.
    line = "x " * 200 + "it failed with ValueError: bad input. Then more"
    assert list(error_lines(line)) == ["ValueError: bad input"]
