"""Tool-call arguments read through their JSON (docs/architecture.md, "The algorithm").

Arguments are JSON text, and a string value with an escape reads differently from its raw text:
a path at the start of a written file's line follows the ``n`` of ``\\n``, a
``"password": "x"`` inside a value is ``\\"password\\": \\"x\\"``, a key can be written
``\\u0073k-...``. The ledger reads the strings (``readable``); redaction matches the strings and
encodes the arguments again (``redacted``). Arguments with no escape read the same raw.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace

from compaction.core.messages import Message
from compaction.core.redact import Rules, redact_many


def strings_of(arguments: str) -> list[str] | None:
    """The strings of the decoded arguments, in order; ``None`` when they hold no escape (the
    raw text reads the same) or do not decode (stored before they were checked)."""
    if "\\" not in arguments:
        return None
    try:
        decoded = json.loads(arguments)
    except (ValueError, RecursionError):
        return None
    return list(_strings(decoded))


def readable(arguments: str, strings: list[str] | None) -> str:
    """The arguments as text to read: ``strings`` (``strings_of(arguments)``), one per line;
    the arguments as written where that is ``None``."""
    return arguments if strings is None else "\n".join(strings)


def redacted(
    messages: Sequence[Message], rules: Rules, strings: Mapping[str, list[str]]
) -> Sequence[Message]:
    """``messages`` with the secrets in their escaped arguments' strings redacted, each call's
    arguments encoded again where one changed (``strings``: ``strings_of`` of each escaped
    arguments text; the others are redacted on their raw text with the rest of the entry).
    ``messages`` themselves when nothing changed, as is usual: no pass over them then."""
    changed = _changed(rules, strings)
    if not changed:
        return messages
    out = list(messages)
    for index, message in enumerate(out):
        if any(call.arguments in changed for call in message.tool_calls):
            calls = [
                replace(call, arguments=changed[call.arguments])
                if call.arguments in changed
                else call
                for call in message.tool_calls
            ]
            out[index] = replace(message, tool_calls=calls)
    return out


def _changed(rules: Rules, strings: Mapping[str, list[str]]) -> dict[str, str]:
    """Escaped arguments text -> the same encoded again with its strings redacted, for those
    redaction changes; all strings redacted in one call."""
    flat = [text for found in strings.values() for text in found]
    cleaned = redact_many(flat, rules)
    if cleaned == flat:
        return {}
    changed: dict[str, str] = {}
    at = 0
    for arguments, found in strings.items():
        mine, at = cleaned[at : at + len(found)], at + len(found)
        if mine != found:
            changed[arguments] = _encoded(arguments, mine)
    return changed


def _encoded(arguments: str, cleaned: list[str]) -> str:
    try:
        return json.dumps(_rebuilt(json.loads(arguments), iter(cleaned)), ensure_ascii=False)
    except RecursionError:  # deeper than a rebuild goes: the strings alone, none left out
        return "\n".join(cleaned)


def _strings(value: object) -> Iterator[str]:
    pending = [value]
    while pending:  # no recursion: stored arguments may nest deeper than Python's limit
        item = pending.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            pending += reversed(list(item.values()))
        elif isinstance(item, list):
            pending += reversed(item)


def _rebuilt(value: object, cleaned: Iterator[str]) -> object:
    """``value`` with its strings taken in order from ``cleaned`` (the order of ``_strings``)."""
    if isinstance(value, str):
        return next(cleaned)
    if isinstance(value, dict):
        return {key: _rebuilt(item, cleaned) for key, item in value.items()}
    if isinstance(value, list):
        return [_rebuilt(item, cleaned) for item in value]
    return value
