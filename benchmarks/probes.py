"""Probe questions for the fidelity harness (``benchmarks/fidelity.py``): each asks for one exact
fact of the compacted span, found deterministically in the span's messages and tool calls.

Kinds: ``path`` (a file the assistant wrote or edited), ``command`` (the first line a call's
result printed), ``error`` (the error line a call ended with), ``value`` (a ``name: value`` or
``name=value`` whose name has that one value in the whole conversation). A fact the kept
messages still show verbatim is no probe: both contexts hold it, so it says nothing about the
summary. Pure: no network, no store.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from compaction.core.identifiers import commands, error_lines, scan
from compaction.core.messages import Message, ToolCall

KINDS = ("path", "command", "error", "value")
#: the instruction after every question: the fact is looked for in the answer
INSTRUCTION = (
    "Answer with the exact string only, nothing else. "
    "If the conversation does not say, answer: unknown"
)
#: a fact shorter than this matches by chance; a longer one is no longer one exact string
MIN_FACT, MAX_FACT = 6, 160
#: the longest anchor (command, call, snippet) a question quotes
MAX_ANCHOR = 160
_PATH_KEYS = ("path", "file_path", "filename")
_WRITTEN_KEYS = ("new_str", "new_string", "file_text", "content")
_CHANGES = ("write", "edit", "create", "replace", "insert", "patch")
# In a lookahead, so pairs may overlap: `"text": "VERSION = 2.31.0"` holds two.
_PAIR = re.compile(r"(?<![\w/.-])(?=\"?([A-Za-z_][\w.-]{1,40})\"?\s*[:=]\s*\"?([\w$.+:/@-]+))")
_NUMBER = re.compile(r"[\d.,:/+-]*\d[\d.,:/+-]*\d[\d.,:/+-]*\d[\d.,:/+-]*")  # 3 digits or more
#: a line that quotes code (a listing's ``except IndexError:``) is no error that happened
_CODE = re.compile(
    r"^\s*(?:\d+[:\t ]\s*)?(?:except|raise|catch|throw|class|def|import|from|#|//)\b"
)


@dataclass(frozen=True, slots=True)
class Probe:
    kind: str
    question: str
    #: the exact string the answer must contain
    fact: str

    @property
    def prompt(self) -> str:
        return f"{self.question}\n{INSTRUCTION}"


def message_text(message: Message) -> str:
    """All a message says: its original content and its calls' names and arguments."""
    calls = (f"{call.name} {call.arguments}" for call in message.tool_calls)
    return "\n".join([message.source_text, *calls])


def _clean(line: str) -> str:
    return " ".join(line.split())


def _fits(fact: str) -> bool:
    return MIN_FACT <= len(fact) <= MAX_FACT and any(c.isalnum() for c in fact)


def _arguments(call: ToolCall) -> dict[str, object]:
    try:
        args = json.loads(call.arguments)
    except (ValueError, RecursionError):
        return {}
    return args if isinstance(args, dict) else {}


def _first_line(text: str) -> str:
    return next((_clean(line) for line in text.splitlines() if line.strip()), "")


def _calls(messages: Iterable[Message]) -> Iterator[ToolCall]:
    return (call for m in messages if m.role == "assistant" for call in m.tool_calls)


def _changes(span: Sequence[Message]) -> Iterator[Probe]:
    """A file written or edited: the question quotes the first line it wrote."""
    for call in _calls(span):
        args = _arguments(call)
        path = next((v for k in _PATH_KEYS if isinstance(v := args.get(k), str)), "")
        action = f"{call.name} {args.get('command', '')}".lower()
        written = next((v for k in _WRITTEN_KEYS if isinstance(v := args.get(k), str)), "")
        snippet = _first_line(written)[:MAX_ANCHOR]
        if path and snippet and any(word in action for word in _CHANGES):
            question = f"Which file did the assistant write or edit so that it holds `{snippet}`?"
            yield Probe("path", question, path.strip())


def _anchor(call: ToolCall) -> str:
    """How a question names a call: the command it ran, else its name and arguments (an
    editor's ``command`` is the edit it makes to its ``path``: no command run)."""
    edits = any(key in _arguments(call) for key in _PATH_KEYS)
    command = None if edits else next(iter(commands([call])), None)
    return command or _clean(f"{call.name} {call.arguments}")


def _error(text: str) -> str:
    """The last error line of a result; a bare label (``ERROR:``) stands for the line after."""
    lines = [_clean(line) for line in text.splitlines()]
    found = [_clean(line) for line in error_lines(text) if not _CODE.match(line)]
    if not found:
        return ""
    last = found[-1]
    if last.endswith(":") and len(last) < MIN_FACT * 3 and last in lines:
        rest = lines[lines.index(last) + 1 :]
        return next((line for line in rest if line), "")
    return last


def _runs(span: Sequence[Message], everything: Sequence[Message]) -> Iterator[Probe]:
    """A call and its result: the error it ended with, else the first line it printed. A call
    made twice in the conversation is left out (which result would the answer be?)."""
    made = Counter(_anchor(call) for call in _calls(everything))
    results = {m.tool_call_id: m.source_text for m in everything if m.role == "tool"}
    for call in _calls(span):
        anchor = _anchor(call)
        if made[anchor] > 1 or len(anchor) > MAX_ANCHOR or call.id not in results:
            continue
        text = results[call.id]
        if error := _error(text):
            yield Probe("error", f"What error did `{anchor}` end with?", error)
        elif line := _first_line(text):
            yield Probe("command", f"What was the first line of the result of `{anchor}`?", line)


def _pairs(text: str) -> Iterator[tuple[str, str]]:
    for match in _PAIR.finditer(text):
        name, value = match.group(1), match.group(2).rstrip(".:/")
        exact = _NUMBER.fullmatch(value) or "@" in value or any(scan([value]).values())
        # a link is no name's value (prose says "instead: https://..."; "https:" is no name)
        if exact and "://" not in value and name.lower() not in ("http", "https"):
            yield name, value


def _values(span: Sequence[Message], everything: Sequence[Message]) -> Iterator[Probe]:
    """A name with one value in the whole conversation: an id, a version, an amount, a number
    or date, an address (what the ledger would call one)."""
    seen: defaultdict[str, set[str]] = defaultdict(set)
    for message in everything:
        for name, value in _pairs(message_text(message)):
            seen[name].add(value)
    for message in span:
        for name, value in _pairs(message_text(message)):
            if seen[name] == {value}:
                yield Probe("value", f"What value did `{name}` have?", value)


def generate(
    messages: Sequence[Message], span_ids: Iterable[int], kept: Sequence[Message], limit: int
) -> list[Probe]:
    """Up to ``limit`` probes on the span (the messages with ``span_ids``), the kinds taken in
    turn, each in the span's order; none whose fact ``kept`` (the messages the compacted
    context keeps verbatim) shows, or whose question gives it away."""
    ids = set(span_ids)
    span = [m for m in messages if m.id in ids]
    shown = "\n".join(_clean(message_text(m)) for m in kept)
    by_kind: dict[str, list[Probe]] = {kind: [] for kind in KINDS}
    facts: set[str] = set()
    for probe in (*_changes(span), *_runs(span, messages), *_values(span, messages)):
        fact = probe.fact
        if _fits(fact) and fact not in facts and fact not in shown and fact not in probe.question:
            facts.add(fact)
            by_kind[probe.kind].append(probe)
    chosen: list[Probe] = []
    for turn in range(max(map(len, by_kind.values()), default=0)):
        chosen += [found[turn] for found in by_kind.values() if turn < len(found)]
    return chosen[:limit]
