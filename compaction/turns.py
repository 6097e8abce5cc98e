"""The turns to summarize, gathered in one pass, and cache-sized blocks of text.

Every pass over a 100,000-message middle costs a cache miss or more per message (the messages
no longer fit in the processor's cache), so the texts the later steps read (the words for the
ledger and for choosing redaction rules, the spoken lines for error hints, the tool calls) are
collected in a single pass.

Most of a transcript is repetition (the same paths, ids and log lines again and again: about one
word in five is new), so the identifier ledger scans the distinct words, and the redaction rules
are chosen on them, instead of on the whole text.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate

from compaction.messages import Message, ToolCall

#: Characters per block: small enough for the cache, large enough that per-block calls are few.
BLOCK_CHARS = 256 * 1024


def blocks(texts: Sequence[str], chars: int = BLOCK_CHARS) -> Iterator[Sequence[str]]:
    """Consecutive slices of ``texts`` of about ``chars`` characters each (a longer text is a
    block of its own); nothing when ``texts`` is empty.

    Whole-middle work is done block by block: one joined string of a 100,000-message middle
    streams tens of megabytes through memory on every pass; a block stays in the cache."""
    # Running totals and a binary search per block: no Python step per text.
    ends = list(accumulate(map(len, texts)))
    start = 0
    while start < len(texts):
        base = ends[start - 1] if start else 0
        stop = bisect_right(ends, base + chars, lo=start + 1)
        yield texts[start:stop]
        start = stop


@dataclass(frozen=True, slots=True)
class Turns:
    """The messages of a middle that are not summaries, with what the later steps read."""

    messages: list[Message]
    #: original contents and tool-call arguments, in conversation order
    texts: list[str]
    #: original contents of the user and tool turns (where error output shows up)
    spoken: list[str]
    calls: list[ToolCall]

    @classmethod
    def of(cls, messages: Iterable[Message]) -> Turns:
        turns: list[Message] = []
        texts: list[str] = []
        spoken: list[str] = []
        calls: list[ToolCall] = []
        for message in messages:
            if message.is_summary:
                continue
            turns.append(message)
            text = message.source_text
            texts.append(text)
            if message.role in ("tool", "user"):
                spoken.append(text)
            if message.tool_calls:
                calls.extend(message.tool_calls)
                texts.extend(call.arguments for call in message.tool_calls)
        return cls(turns, texts, spoken, calls)

    def distinct_words(self) -> list[str]:
        """The whitespace-separated words of ``texts``, each once, in order of first
        appearance."""
        seen: dict[str, None] = {}
        for block in blocks(self.texts):
            seen.update(dict.fromkeys("\n".join(block).split()))
        return list(seen)
