"""How the ledger chooses its items under its token cap (docs/survival.md): newest first, and
none that a listed item already holds verbatim.

A directory inside a listed path, an id inside a listed path, URL or command survives inside
it: listing it again spends the ledger's budget on nothing. ``Cover`` counts, for every piece of
every listed item, how many listed items hold it, so that "is this held by a listed item?" is one
dictionary look-up (a middle gives hundreds of thousands of candidates; a substring search of
the listed text per candidate would cost a scan each).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Sequence

from compaction.core.tokens import TextEstimator

#: What separates the pieces of a word: anything but a letter or a digit (``_`` too: the id
#: ``cache_12`` in ``cache_12_test.py``).
_DELIMITER = re.compile(r"[\W_]")
#: Delimiters a piece may start with: a path's (``/repo/src``, ``./x``, ``~/x``).
_LEADING = frozenset("/.~")
#: The most delimiters a piece spans: a piece is an identifier (an id, a directory), not the
#: whole of a long URL; bounds the pieces of a word to a multiple of its length.
MAX_SPAN = 12
#: Copies of a packed item estimated together (``Picker.cost``).
COPIES = 8


def pieces(item: str) -> set[str]:
    """``item`` and every piece of each of its words that runs from the start of a segment (or
    the path delimiter before it) to the end of a segment, where segments are what delimiters
    separate (``/repo/src``, ``repo/src`` and ``cache_12`` in ``/repo/src/cache_12.py``): the
    forms an identifier held by another takes. Each is a substring of ``item``."""
    out = {item}
    for word in item.split():
        cuts = [m.start() for m in _DELIMITER.finditer(word)]
        if not cuts:
            continue
        ends = [*cuts, len(word)]
        starts = [0, *(c + 1 for c in cuts)]
        for i, start in enumerate(starts):
            firsts = (start, start - 1) if i and word[start - 1] in _LEADING else (start,)
            for end in ends[i : i + 1 + MAX_SPAN]:
                for first in firsts:
                    if end > first:
                        out.add(word[first:end])
    return out


class Cover:
    """The pieces of the items listed so far, each with the number of listed items holding it."""

    def __init__(self) -> None:
        self._counts: Counter[str] = Counter()

    def __contains__(self, item: str) -> bool:
        """``item`` is verbatim inside a listed item (or is one)."""
        return self._counts.get(item, 0) > 0

    def add(self, item: str, whole: bool = False) -> None:
        """``item`` listed: its pieces, or itself alone when ``whole`` (an id holds no other)."""
        self._counts.update({item} if whole else pieces(item))

    def remove(self, item: str, whole: bool = False) -> None:
        self._counts.subtract({item} if whole else pieces(item))

    def pieces(self) -> set[str]:
        """Every piece a listed item holds."""
        return {piece for piece, count in self._counts.items() if count > 0}

    def held_elsewhere(self, item: str) -> bool:
        """``item`` (listed) is verbatim inside another listed item too: each item holds
        itself once."""
        return self._counts.get(item, 0) > 1


class Picker:
    """The items chosen under the cap, what they hold (``Cover``) and what is left to spend.

    ``pools`` are each kind's candidates, the first to take last (``take`` pops); ``kinds``
    the priority order; ``packed`` the kinds listed several to a line, in lines of about
    ``line_chars`` characters; ``holders`` the kinds whose items may hold others (the pieces of
    the others' are not worth their cost: an id inside an id)."""

    def __init__(
        self,
        pools: dict[str, list[str]],
        kinds: Sequence[str],
        packed: Collection[str],
        holders: Collection[str],
        max_tokens: int,
        estimate_text: TextEstimator,
        line_chars: int = 100,
    ) -> None:
        self.pools = pools
        self.kinds = kinds
        self.packed = packed
        self.line_chars = line_chars
        self.holders = holders
        self.estimate_text = estimate_text
        self.remaining = float(max_tokens)
        self.chosen: dict[str, list[str]] = {kind: [] for kind in kinds}
        self.costs: dict[tuple[str, str], float] = {}
        self.cover = Cover()
        self.held = 0

    def cost(self, kind: str, item: str) -> float:
        """The tokens listing ``item`` costs."""
        if kind in self.packed:
            # One of many on a line: the item and a space, and its share of the line's "- ".
            # The estimate of several copies, divided back: a per-item estimate's rounding (a
            # quarter of the characters, floored) would miscount a 9-character id by a third.
            text = (item + " ") * COPIES
            return self.estimate_text(text) / COPIES * (1 + 2 / self.line_chars)
        return self.estimate_text(item) + 2  # "- " and the newline

    def take(self, kind: str, allowance: float) -> None:
        """The newest items of ``kind`` (acted on first) while they fit ``allowance``; an item a
        listed one holds is passed over, kept at no cost."""
        spent = 0.0
        pool = self.pools[kind]
        while pool:
            item = pool[-1]
            if item in self.cover:
                pool.pop()
                self.held += 1
                continue
            cost = self.cost(kind, item)
            if cost > allowance - spent:
                break
            self.chosen[kind].append(pool.pop())
            self.costs[kind, item] = cost
            self.cover.add(item, kind not in self.holders)
            spent += cost
        self.remaining -= spent

    def fill(self) -> None:
        """The budget left spent on the kinds in priority order."""
        for kind in self.kinds:
            self.take(kind, self.remaining)

    def unlist_held(self) -> bool:
        """Take off the list the items a later choice holds (an id listed before the path that
        holds it); whether that freed anything."""
        freed = False
        for kind in reversed(self.kinds):  # what is held (ids) before what holds it
            kept = []
            for item in self.chosen[kind]:
                if self.cover.held_elsewhere(item):
                    self.cover.remove(item, kind not in self.holders)
                    self.remaining += self.costs.pop((kind, item))
                    self.held += 1
                    freed = True
                else:
                    kept.append(item)
            self.chosen[kind] = kept
        return freed

    def left(self) -> tuple[int, int]:
        """Of what the pools still hold: how many the cap left out, and how many a listed item
        holds after all (kept, with what ``take`` passed over)."""
        # One C-level intersection per kind (a pool holds each item once): a long middle leaves
        # hundreds of thousands of ids in the pools.
        held_now = self.cover.pieces()
        left = held = 0
        for kind in self.kinds:
            left += len(self.pools[kind])
            held += len(held_now.intersection(self.pools[kind]))
        return left - held, self.held + held
