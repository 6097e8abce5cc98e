"""Transcript text that no database stores, or that a compaction could not read back
(docs/architecture.md, "Tables", appends): refused where messages come in, replaced where the
service writes text of its own made from stored data.

PostgreSQL refuses NUL in text, a lone surrogate has no UTF-8 form at all, and tool-call
arguments are JSON text that the summary's ledger decodes, so the same characters written as
``\\u`` escapes count too, and so does nesting deep enough to exhaust ``json.loads``.
"""

from __future__ import annotations

import re
from itertools import accumulate
from typing import TYPE_CHECKING

from compaction.core.errors import InvalidRequest

if TYPE_CHECKING:  # messages.py checks its dicts with this module
    from compaction.core.messages import Message

#: Deepest nesting accepted in tool-call arguments: far past any real tool's, far below Python's
#: recursion limit, which the summary's ledger meets when it parses them with ``json.loads``.
MAX_ARGUMENTS_DEPTH = 100
#: Longest tool-call id a tool result may carry (the store's column).
MAX_TOOL_CALL_ID = 256
#: No database stores a lone surrogate (it has no UTF-8); PostgreSQL refuses NUL too.
_SURROGATE = re.compile("[\ud800-\udfff]")
# A \u escape of NUL or of a surrogate in JSON text, its backslash not itself escaped (an even
# run of backslashes before it); a high-low pair (an emoji, escaped) is named to be let through.
_UNSTORABLE_ESCAPE = re.compile(
    r"""(?<!\\) (?:\\\\)* \\u
        (?: (?P<pair> d[89ab][0-9a-f]{2} \\u d[c-f][0-9a-f]{2}) | 0000 | d[89a-f][0-9a-f]{2} )""",
    re.IGNORECASE | re.VERBOSE,
)
# A JSON string, or an unterminated one up to the end: it never fails once begun, so the scan
# stays linear whatever the input.
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\(?:.|\Z)[^"\\]*)*(?:"|\Z)', re.DOTALL)
_BRACKETS = re.compile(r"[\[\]{}]")
_DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def check_storable(message: Message) -> Message:
    """``message``, if any database stores it and a compaction can read it back; else
    ``InvalidRequest``: NUL or a lone surrogate in any of its text, the same written as a
    JSON escape in tool-call arguments (the ledger decodes them), arguments nested deeper than
    ``MAX_ARGUMENTS_DEPTH``, a tool result's id over ``MAX_TOOL_CALL_ID`` characters. Every way
    into the store checks this (``Message.from_dict``, the appends)."""
    _check_text(message.content, "content")
    if message.tool_call_id is not None:
        _check_text(message.tool_call_id, "tool_call_id")
        if len(message.tool_call_id) > MAX_TOOL_CALL_ID:
            raise InvalidRequest(f"tool_call_id is over {MAX_TOOL_CALL_ID} characters")
    for call in message.tool_calls:
        _check_text(call.id, "tool call id")
        _check_text(call.name, "tool call name")
        _check_arguments(call.arguments)
    return message


def _check_text(text: str, what: str) -> None:
    # A C-speed search for NUL; only text that is not ASCII (a flag, no scan) holds surrogates.
    if "\x00" in text:
        raise InvalidRequest(f"{what} holds a NUL character, which no database stores")
    if not text.isascii() and _SURROGATE.search(text):
        raise InvalidRequest(f"{what} holds a lone surrogate, which has no UTF-8 form")


def _check_arguments(arguments: str) -> None:
    _check_text(arguments, "tool call arguments")
    if "\\u" in arguments:
        for match in _UNSTORABLE_ESCAPE.finditer(arguments):
            if match.group("pair") is None:
                escape = match.group(0).lstrip("\\")
                what = "NUL" if escape.endswith("0000") else "a lone surrogate"
                raise InvalidRequest(
                    f"tool call arguments hold the escape \\{escape} ({what}), "
                    "which no database stores"
                )
    # Only text with more brackets than the limit can nest past it: C-speed counts first.
    if arguments.count("[") + arguments.count("{") > MAX_ARGUMENTS_DEPTH:
        steps = map(_DEPTH_STEP.__getitem__, _BRACKETS.findall(_JSON_STRING.sub("", arguments)))
        if max(accumulate(steps), default=0) > MAX_ARGUMENTS_DEPTH:
            raise too_deep()


def storable(text: str) -> str:
    """``text`` with NUL and lone surrogates replaced by U+FFFD: for text the service writes
    itself from stored data (a summary's ledger decodes arguments), which must never be what
    the database refuses."""
    text = text.replace("\x00", "\ufffd")
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


def too_deep() -> InvalidRequest:
    return InvalidRequest(f"tool call arguments nest deeper than {MAX_ARGUMENTS_DEPTH} levels")
