"""The part of a long text around what a search matched (docs/architecture.md, "Recall").

Recall cuts a match longer than its share of the budget; cutting from the start loses an
identifier near the end of a long listing or tool output. ``excerpt`` keeps the window of the
text, as long as the budget allows, where the query's terms are densest, with the matches
centred in it, or two windows of half the length when the densest one leaves out a term found
elsewhere, and says how many characters were left out around them (``cut_mark``, the one home
of that format). Pure: no I/O.

Terms (``needles``): the whole query, its whitespace-separated parts (how PostgreSQL's parser
sees ``file_2.py``) and its words, each matched case-insensitively as written. A window scores
the summed length of the distinct terms it holds whole, so the query verbatim outweighs its
pieces and a one-letter word hardly counts; ties go to more occurrences, then to the earliest.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from compaction.core.tokens import TextEstimator

#: a term found more often than this in one text is too common to say where to look ("src"
#: in a file listing) and is left out of the window's choice, unless every term is: then the
#: heaviest one's first occurrences are kept. It bounds the sweep, run once per length tried
MAX_OCCURRENCES = 100
#: how far an end of the window moves to reach a line break (characters given up for a
#: window that starts and ends on whole lines)
SNAP = 120
#: the shortest window worth showing alone: shorter, one window is kept rather than two
MIN_WINDOW = 200
_WORD = re.compile(r"\w+", re.UNICODE)
Where = Literal["before", "between", "after"]


def cut_mark(count: int, where: Where) -> str:
    """What stands for ``count`` characters left out ``where``: before the first window,
    between two, after the last."""
    mark = f"[{count} characters {where}]"
    if where == "before":
        return f"… {mark} … "
    return f" … {mark} …" + (" " if where == "between" else "")


def needles(query: str) -> list[str]:
    """The terms of ``query`` looked for in a text: the query stripped, its whitespace parts,
    its words; lower case, each once, in that order."""
    lowered = query.strip().lower()
    found = [lowered, *lowered.split(), *_WORD.findall(lowered)]
    return [term for term in dict.fromkeys(found) if term]


@dataclass(frozen=True, slots=True)
class _Occurrence:
    start: int
    end: int
    term: int


def occurrences(text: str, terms: Sequence[str]) -> list[_Occurrence]:
    """Where the terms of ``terms`` (lower case) that are not too common (``MAX_OCCURRENCES``)
    occur in ``text`` (case-insensitive), sorted by start."""
    out: list[_Occurrence] = []
    common: list[_Occurrence] = []
    find = _finder(text)
    for index, term in enumerate(terms):
        found = [_Occurrence(at, at + len(term), index) for at in find(term)]
        if len(found) <= MAX_OCCURRENCES:
            out += found
        elif not common or len(term) > len(terms[common[0].term]):  # the heaviest
            common = found[:MAX_OCCURRENCES]
    out = out or common
    out.sort(key=lambda o: (o.start, o.end))
    return out


def _finder(text: str) -> Callable[[str], list[int]]:
    """Where a lower-case term starts in ``text`` (case-insensitive), at most
    ``MAX_OCCURRENCES + 1`` places: ``str.find`` on the text lowered once, many times faster
    than a case-insensitive pattern; a pattern where lowering changes the length (``İ``), as
    the places would then not be the text's."""
    lowered = text.lower()
    if len(lowered) != len(text):
        return lambda term: [
            match.start()
            for match in itertools.islice(
                re.finditer(re.escape(term), text, re.IGNORECASE), MAX_OCCURRENCES + 1
            )
        ]

    def find(term: str) -> list[int]:
        places: list[int] = []
        at = lowered.find(term)
        while at >= 0 and len(places) <= MAX_OCCURRENCES:
            places.append(at)
            at = lowered.find(term, at + len(term))
        return places

    return find


class _Sweep:
    """The densest window of a given length over ``found`` (sorted by start): two pointers,
    one adding occurrences in the order they end, one dropping them in the order they start."""

    def __init__(self, found: Sequence[_Occurrence], weights: Sequence[int]) -> None:
        self.found = found
        self.weights = weights
        self.by_end = sorted(range(len(found)), key=lambda j: (found[j].end, found[j].start))
        self.starts = [o.start for o in found]

    def best_start(self, length: int) -> int:
        found, weights = self.found, self.weights
        counts = [0] * len(weights)
        added = [False] * len(found)
        score = hits = right = left = 0
        best = (-1, -1, 0)
        for occurrence in found:
            start = occurrence.start
            while found[left].start < start:  # left < this occurrence's index
                if added[left]:
                    added[left] = False
                    hits -= 1
                    counts[found[left].term] -= 1
                    score -= weights[found[left].term] if not counts[found[left].term] else 0
                left += 1
            while right < len(found) and found[self.by_end[right]].end <= start + length:
                j = self.by_end[right]
                if found[j].start >= start:
                    added[j] = True
                    hits += 1
                    score += weights[found[j].term] if not counts[found[j].term] else 0
                    counts[found[j].term] += 1
                right += 1
            if (score, hits) > best[:2]:
                best = (score, hits, start)
        return best[2]


def window(text: str, found: Sequence[_Occurrence], sweep: _Sweep, length: int) -> range:
    """The ``length`` characters of ``text`` holding the densest matches, centred on them
    (their ``core``), its ends moved to a line break when one is near."""
    if not found or length >= len(text):
        return range(0, min(length, len(text)))
    start = sweep.best_start(length)
    near = slice(
        bisect.bisect_left(sweep.starts, start), bisect.bisect_right(sweep.starts, start + length)
    )
    inside = [o for o in found[near] if o.end <= start + length]
    # a window too short for any whole match begins where the first one begins
    first, last = core(inside, sweep.weights) if inside else (start, start + length)
    begin = max(0, first - (length - (last - first)) // 2)
    end = min(len(text), begin + length)
    begin = max(0, end - length)
    return range(_snap_start(text, begin, first), _snap_end(text, end, last))


def core(inside: Sequence[_Occurrence], weights: Sequence[int]) -> tuple[int, int]:
    """The span of the first occurrence of the heaviest term of ``inside``, widened to hold
    the occurrence nearest to it of every other term there (all of them inside the window)."""
    heaviest = max(inside, key=lambda o: (weights[o.term], -o.start))
    first, last = heaviest.start, heaviest.end
    nearest: dict[int, tuple[int, _Occurrence]] = {}
    for o in inside:
        widening = max(0, first - o.start) + max(0, o.end - last)
        if o.term not in nearest or widening < nearest[o.term][0]:
            nearest[o.term] = (widening, o)
    for _widening, o in nearest.values():
        first, last = min(first, o.start), max(last, o.end)
    return first, last


def _snap_start(text: str, begin: int, first: int) -> int:
    """``begin`` moved just past a line break at most ``SNAP`` characters on (never past the
    matches, which start at ``first``)."""
    if begin == 0:
        return 0
    newline = text.find("\n", begin, min(first, begin + SNAP))
    return begin if newline < 0 else newline + 1


def _snap_end(text: str, end: int, last: int) -> int:
    """``end`` moved back to a line break at most ``SNAP`` characters before it (never into
    the matches, which end at ``last``)."""
    if end == len(text):
        return end
    newline = text.rfind("\n", max(last, end - SNAP), end)
    return end if newline < 0 else newline


def windows(text: str, found: Sequence[_Occurrence], sweep: _Sweep, length: int) -> list[range]:
    """The densest ``window`` of ``length``; or, when it leaves out a term found elsewhere,
    two windows of half the length (the densest, then the densest of the terms it left out),
    if together they hold more of the terms (by weight) and each is at least ``MIN_WINDOW``."""
    one = window(text, found, sweep, length)
    held = _held(found, [one])
    if held == {o.term for o in found} or length < 2 * MIN_WINDOW:
        return [one]
    first = window(text, found, sweep, length // 2)
    first_held = _held(found, [first])
    rest = [o for o in found if o.term not in first_held]
    if not rest:
        return [one]
    second = window(text, rest, _Sweep(rest, sweep.weights), length // 2)
    pair = sorted((first, second), key=lambda span: span.start)
    if pair[0].stop >= pair[1].start:  # touching: one window
        pair = [range(pair[0].start, max(pair[0].stop, pair[1].stop))]
    weight = sweep.weights
    if sum(weight[t] for t in _held(found, pair)) > sum(weight[t] for t in held):
        return pair
    return [one]


def _held(found: Sequence[_Occurrence], spans: Sequence[range]) -> set[int]:
    """The terms with an occurrence wholly inside one of ``spans``."""
    return {o.term for o in found for s in spans if s.start <= o.start and o.end <= s.stop}


def render(text: str, spans: Sequence[range]) -> str:
    """``text``'s ``spans`` (in order, apart) with the cut marks for what lies between and
    around them."""
    parts, at = [], 0
    for span in spans:
        if span.start > at:
            parts.append(cut_mark(span.start - at, "between" if at else "before"))
        parts.append(text[span.start : span.stop])
        at = span.stop
    if at < len(text):
        parts.append(cut_mark(len(text) - at, "after"))
    return "".join(parts)


def excerpt(text: str, query: str, budget: int, estimate: TextEstimator) -> tuple[str, bool]:
    """``text`` within ``budget`` tokens (``estimate``): whole when it fits, else the longest
    ``windows`` around the query's matches that fit with their cut marks (the text's head
    when nothing matches: a match the tokenizer found but the text does not hold as written),
    and ``True``. The window's length is found by bisection; every length tried is rendered
    and estimated, so the result fits whatever the estimate counts."""
    if estimate(text) <= budget:
        return text, False
    terms = needles(query)
    found = occurrences(text, terms)
    sweep = _Sweep(found, [len(term) for term in terms])
    low, high = 0, len(text) - 1
    while low < high:
        mid = (low + high + 1) // 2
        if estimate(render(text, windows(text, found, sweep, mid))) <= budget:
            low = mid
        else:
            high = mid - 1
    if low == 0:
        return "", True
    return render(text, windows(text, found, sweep, low)), True
