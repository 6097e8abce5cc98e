"""The user's own words, kept verbatim in the summary (docs/algorithm.md, "The user's own words").

A summary paraphrases, and a user's constraint ("never touch main", "go with C") paraphrased is a
constraint lost. So the summary assembly (``compaction/core/summary.py``) adds, as the summary's
last section (after the summarizer's body and the identifier ledger), one holding each real
user message of the compacted span (``messages.own_words``) word for word: newest first, within
``user_words_max_tokens``; those that do not fit are listed by their first line. The previous
summary's section is read back and merged (newest first, each text once), so a second
compaction keeps the first one's user words. The same for the model's summary and the offline
summarizer's: the section is the engine's, not the summarizer's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from compaction.core.messages import Message, own_words
from compaction.core.storable import storable
from compaction.core.tokens import TextEstimator

TITLES: dict[str, str] = {
    "en": "## The user's messages (verbatim, newest first)",
    "zh": "## 用户的原话（逐字保留，最新在前）",
}
EARLIER: dict[str, str] = {
    "en": "### Earlier user messages (first line only)",
    "zh": "### 更早的用户消息（仅首行）",
}
#: Each verbatim message sits between these lines: a message may hold any text, headings too.
OPEN, CLOSE = "<user-message>", "</user-message>"
#: A message listed by its first line (here and in a receipt's folded list) is cut to this many
#: characters.
FIRST_LINE_CHARS = 160
#: The most of the budget the first-line listing of older messages may hold back from the
#: verbatim ones (so that a long history of short lines never crowds out the newest words).
LISTING_SHARE = 0.25
_EARLIER_LINES = frozenset(EARLIER.values())


@dataclass(frozen=True, slots=True)
class Words:
    """The section's content: texts kept whole and first lines, each newest first; ``omitted``
    counts the messages neither could hold."""

    verbatim: tuple[str, ...] = ()
    listed: tuple[str, ...] = ()
    omitted: int = 0

    def __bool__(self) -> bool:
        return bool(self.verbatim or self.listed or self.omitted)


def of(messages: Iterable[Message]) -> list[str]:
    """The user's own words in ``messages`` (their original texts, stripped), newest first."""
    texts = [text for m in messages if (text := own_words(m))]
    return list(dict.fromkeys(reversed(texts)))


def first_line(text: str) -> str:
    line = text.strip().split("\n", 1)[0].strip()
    return line if len(line) <= FIRST_LINE_CHARS else line[: FIRST_LINE_CHARS - 1] + "…"


def build(
    texts: Sequence[str], previous: Words | None, max_tokens: int, estimate: TextEstimator
) -> Words:
    """The section of a summary: ``texts`` (this span's, newest first) before the previous
    section's, whole while they fit ``max_tokens``, else by first line."""
    old = previous or Words()
    whole = list(dict.fromkeys([*texts, *old.verbatim]))
    candidates = [(t, True) for t in whole] + [(line, False) for line in old.listed]
    lines = [first_line(t) if full else t for t, full in candidates]
    line_costs = [estimate(line) + 2 for line in lines]
    # what the listing of the older ones may hold back: at most a share of the budget
    rest = [0] * (len(candidates) + 1)
    for i in range(len(candidates) - 1, -1, -1):
        rest[i] = rest[i + 1] + line_costs[i]
    cap = int(max_tokens * LISTING_SHARE)
    left, verbatim, listed, omitted = max_tokens, [], [], old.omitted
    for i, (text, full) in enumerate(candidates):
        cost = estimate(text) + 4
        if full and cost + min(rest[i + 1], cap) <= left:
            verbatim.append(text)
            left -= cost
        elif line_costs[i] <= left and lines[i] not in listed:
            listed.append(lines[i])
            left -= line_costs[i]
        elif lines[i] not in listed:
            omitted += 1
    return Words(tuple(verbatim), tuple(listed), omitted)


def render(words: Words, language: str) -> str:
    if not words:
        return ""
    lines = [TITLES.get(language, TITLES["en"])]
    for text in words.verbatim:
        lines += [OPEN, text, CLOSE]
    if words.listed or words.omitted:
        lines.append(EARLIER.get(language, EARLIER["en"]))
        lines.extend(f"- {line}" for line in words.listed)
        if words.omitted:
            lines.append(f"- (+{words.omitted})")
    # a user's text may hold what no database stores (a NUL)
    return storable("\n".join(lines))


def parse(summary: str) -> tuple[str, Words | None]:
    """Split a summary into what comes before this section and the section (None when it has
    none). The first title wins: a user's message inside the section may quote one, and what
    comes before is the engine's (the ledger) or the summarizer's, who is not shown the section."""
    found = [(at, title) for title in TITLES.values() if (at := summary.find(title)) != -1]
    if not found:
        return summary, None
    at, title = min(found)
    verbatim, listed, omitted = [], [], 0
    current: list[str] | None = None
    earlier = False
    for line in summary[at + len(title) :].split("\n"):
        if current is not None:
            if line == CLOSE:
                verbatim.append("\n".join(current))
                current = None
            else:
                current.append(line)
        elif line == OPEN:
            current = []
        elif line.strip() in _EARLIER_LINES:
            earlier = True
        elif earlier and line.startswith("- (+") and line.endswith(")"):
            omitted += int(line[4:-1]) if line[4:-1].isdigit() else 0
        elif earlier and line.startswith("- "):
            listed.append(line[2:])
    return summary[:at].rstrip(), Words(tuple(verbatim), tuple(listed), omitted)
