"""The turns to summarize, gathered in one pass.

Every pass over a 100,000-message middle costs a cache miss or more per message (the messages
no longer fit in the processor's cache), so the texts the later steps read (the words for the
ledger and for choosing redaction rules, the spoken lines for error hints, the tool calls) are
collected in a single pass.

Most of a transcript is repetition (the same paths, ids and log lines again and again: about one
word in five is new), so the identifier ledger scans the distinct words, and the redaction rules
are chosen on them, instead of on the whole text.

A tool call's arguments are read as the tool got them (``compaction/core/arguments.py``): JSON with
an escape (``\n``, ``\"``) is read as its strings, else a path at the start of a written file's
line is read as ``nsrc/app.py`` and an id there is lost (``\ndeadbeef12`` is no word of its own).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import chain

from compaction.core.arguments import readable, strings_of
from compaction.core.messages import Message, ToolCall


@dataclass(frozen=True, slots=True)
class Turns:
    """The messages of a middle that are not summaries, with what the later steps read."""

    messages: list[Message]
    #: original contents and tool-call arguments (``arguments.readable``), in conversation order
    texts: list[str]
    #: original contents of the user and tool turns (where error output shows up)
    spoken: list[str]
    calls: list[ToolCall]
    #: the strings of each escaped arguments text (``arguments.strings_of``), decoded once
    escaped: dict[str, list[str]]

    @classmethod
    def of(cls, messages: Iterable[Message]) -> Turns:
        turns: list[Message] = []
        texts: list[str] = []
        spoken: list[str] = []
        calls: list[ToolCall] = []
        escaped: dict[str, list[str]] = {}
        for message in messages:
            if message.is_summary:
                continue
            turns.append(message)
            # ``message.source_text`` without a property call per message (a third of the pass)
            original = message.original_content
            text = message.content if original is None else original
            texts.append(text)
            if message.role in ("tool", "user"):
                spoken.append(text)
            for call in message.tool_calls:
                calls.append(call)
                arguments = call.arguments
                found = escaped.get(arguments)
                if found is None and (found := strings_of(arguments)) is not None:
                    escaped[arguments] = found
                texts.append(readable(arguments, found))
        return cls(turns, texts, spoken, calls, escaped)

    def distinct_words(self) -> list[str]:
        """The whitespace-separated words of ``texts``, each once, in order of first
        appearance."""
        # Each text's words taken in as soon as they are split (no word crosses two texts),
        # while they are in the cache, where joined blocks were split first (10% faster on
        # the long shared transcripts). A text seen before (the same request, the same tool
        # call, an "ok") is not split again: its words are in already, and a string's hash
        # is computed once.
        texts = dict.fromkeys(self.texts)
        return list(dict.fromkeys(chain.from_iterable(map(str.split, texts))))
