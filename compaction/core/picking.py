"""How the ledger chooses its items under its token cap (docs/survival.md): newest first, and
none that a listed item already holds verbatim.

A directory inside a listed path, an id inside a listed path, URL or command survives inside
it: listing it again spends the ledger's budget on nothing. ``Cover`` keeps every piece of every
listed item (``pieces``: the forms an id or a path held by another takes), so that "is this
held by a listed item?" is one set look-up (a middle gives hundreds of thousands of candidates;
a substring search of the listed text per candidate would cost a scan each).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from itertools import chain

from compaction.core.arguments import readable
from compaction.core.identifiers import scan
from compaction.core.tokens import TextEstimator
from compaction.core.turns import Turns

#: Runs of what an id never holds: an id is a whole run of word characters and hyphens
#: (``compaction/core/identifiers.py``: none runs on from a word character or a hyphen).
_NOT_ID = re.compile(r"[^\w-]+")
#: Copies of a packed item estimated together (``Picker.cost``).
COPIES = 8
#: Items of a packed kind judged at once (``Picker._take_words``).
_BATCH = 256


def pieces(item: str) -> set[str]:
    """``item`` and, in each of its words, the forms an identifier held by another takes: each
    run of word characters and hyphens (an id: ``cache_12`` in ``/repo/src/cache_12.py``), and
    each part before or after a ``/`` (a directory: ``/repo/src``; a relative path inside an
    absolute one: ``src/cache_12.py``). Each is a substring of ``item``."""
    out = {item}
    for word in item.split():
        out.add(word)
        out.update(_NOT_ID.split(word))
        if "/" not in word:
            continue
        at = word.find("/")
        while at != -1:
            out.add(word[:at])
            out.add(word[at:])
            out.add(word[at + 1 :])
            at = word.find("/", at + 1)
    out.discard("")
    return out


def acted_on(turns: Turns) -> frozenset[str]:
    """The paths, URLs, ids and values of the calls' arguments: what the agent acted on (a file
    it edited, a page it fetched, an id it passed), listed before what it only read when the
    cap binds (docs/survival.md)."""
    texts = dict.fromkeys(
        readable(c.arguments, turns.escaped.get(c.arguments)) for c in turns.calls
    )
    words = list(dict.fromkeys(chain.from_iterable(map(str.split, texts))))
    return frozenset(chain.from_iterable(scan(words).values())) if words else frozenset()


class Cover:
    """What the holders listed so far hold verbatim: themselves (``listed``) and their proper
    pieces (``inside``: each shorter than a listed item that holds it).

    Nothing is ever taken out: a holder taken off the list is held by a longer listed one
    (``Picker.unlist_held``), which holds its pieces too; the longest of such a chain is never
    inside another, so it stays listed (no two items can take each other off)."""

    def __init__(self) -> None:
        self.listed: set[str] = set()
        self.inside: set[str] = set()

    def __contains__(self, item: str) -> bool:
        """``item`` is verbatim in a listed item (or is one)."""
        return item in self.inside or item in self.listed

    def add(self, item: str) -> None:
        found = pieces(item)
        found.discard(item)
        self.listed.add(item)
        self.inside.update(found)


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
        self.per_copy = (1 + 2 / line_chars) / COPIES
        self.holders = holders
        self.estimate_text = estimate_text
        self.remaining = float(max_tokens)
        self.chosen: dict[str, list[str]] = {kind: [] for kind in kinds}
        self.cover = Cover()
        self.held = 0

    def cost(self, kind: str, item: str) -> float:
        """The tokens listing ``item`` costs."""
        if kind in self.packed:
            # One of many on a line: the item and a space, and its share of the line's "- ".
            # The estimate of several copies, divided back: a per-item estimate's rounding (a
            # quarter of the characters, floored) would miscount a 9-character id by a third.
            return self.estimate_text((item + " ") * COPIES) * self.per_copy
        return self.estimate_text(item) + 2  # "- " and the newline

    def take(self, kind: str, allowance: float) -> None:
        """The newest items of ``kind`` (acted on first) while they fit ``allowance``; an item a
        listed one holds is passed over, kept at no cost."""
        holds, packed = kind in self.holders, kind in self.packed
        if packed and not holds:
            self.remaining -= self._take_words(kind, allowance)
            return
        # ``cost`` and ``item in self.cover`` inlined: this runs for every item listed.
        spent, estimate, per_copy = 0.0, self.estimate_text, self.per_copy
        pool, chosen, cover = self.pools[kind], self.chosen[kind], self.cover
        inside, listed = cover.inside, cover.listed
        while pool:
            item = pool[-1]
            if item in inside or item in listed:
                pool.pop()
                self.held += 1
                continue
            cost = estimate((item + " ") * COPIES) * per_copy if packed else estimate(item) + 2
            if cost > allowance - spent:
                break
            chosen.append(pool.pop())
            if holds:  # an item of another kind holds nothing (``Picker``)
                cover.add(item)
            spent += cost
        self.remaining -= spent

    def _take_words(self, kind: str, allowance: float) -> float:
        """``take`` for a packed kind that holds nothing (ids: thousands of them): the cover does
        not change while it runs, so a batch of the pool is judged at once, at the estimate of
        its items joined as they are listed; in the batch that passes the allowance, the most
        that fit are found by bisection. What it spent."""
        pool, chosen, cover = self.pools[kind], self.chosen[kind], self.cover
        spent = 0.0
        while pool:
            batch = pool[: -_BATCH - 1 : -1]  # the newest first
            inside, listed = cover.inside, cover.listed  # ``item in cover``, without a call
            free = [at for at, i in enumerate(batch) if i not in inside and i not in listed]
            words = [batch[at] for at in free]
            fits = self._fitting(words, allowance - spent)
            end = free[fits] if fits < len(free) else len(batch)  # what is judged: taken or held
            chosen.extend(words[:fits])
            self.held += end - fits
            del pool[len(pool) - end :]
            spent += self._words_cost(words[:fits])
            if fits < len(free):
                break
        return spent

    def _words_cost(self, words: list[str]) -> float:
        """The tokens ``words`` (of a packed kind) cost listed: their text and a space each, and
        the share of the lines' "- "."""
        return self.estimate_text(" ".join(words) + " ") * self.per_copy * COPIES if words else 0

    def _fitting(self, words: list[str], budget: float) -> int:
        """How many of ``words``, from the first, fit ``budget`` (an estimate grows with the
        text: bisection)."""
        if self._words_cost(words) <= budget:
            return len(words)
        low, high = 0, len(words) - 1  # ``low`` fit, ``high + 1`` do not
        while low < high:
            mid = (low + high + 1) // 2
            if self._words_cost(words[:mid]) <= budget:
                low = mid
            else:
                high = mid - 1
        return low

    def fill(self) -> None:
        """The budget left spent on the kinds in priority order."""
        for kind in self.kinds:
            self.take(kind, self.remaining)

    def unlist_held(self) -> bool:
        """Take off the list the items a later choice holds (an id listed before the path that
        holds it); whether that freed anything."""
        freed, inside, listed = False, self.cover.inside, self.cover.listed
        for kind in self.kinds:
            holds, kept = kind in self.holders, []
            for item in self.chosen[kind]:
                # a holder is in ``listed`` itself: only another's pieces take it off
                if item in inside or (not holds and item in listed):
                    self.remaining += self.cost(kind, item)
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
        held_now = self.cover.inside | self.cover.listed
        left = held = 0
        for kind in self.kinds:
            left += len(self.pools[kind])
            held += len(held_now.intersection(self.pools[kind]))
        return left - held, self.held + held
