"""Chunked folding: the middle cut into summarizer calls (docs/architecture.md, "The algorithm",
phase 3).

Two promises. A tool call and its results are one unit, so no chunk starts with a result whose
call is in the chunk before. And no call is larger than ``summary_input_max_tokens``: the turns
of a chunk fit the room the engine leaves them (the prompt's frame and the summary so far are
measured apart), with a unit larger than that room cut down, each entry keeping its head and
tail. Sizes are the config's estimates; the bounds below hold for both estimators, which count
a concatenation at most one token more than its parts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compaction.core.messages import Message
from compaction.core.serialize import cut
from compaction.core.tokens import TextEstimator

#: Between two serialized turns in a chunk.
JOIN = "\n\n"


@dataclass(frozen=True, slots=True)
class Chunk:
    """Turns ``start:end`` of the middle, for one call."""

    start: int
    end: int
    #: the units cut to fit a call: ``(start, end, their entries cut)``, in order
    cuts: tuple[tuple[int, int, tuple[str, ...]], ...] = ()

    def text(self, entries: Sequence[str]) -> str:
        """The chunk's serialized turns, joined (built when its call is made: the chunks of a
        large middle are megabytes)."""
        if not self.cuts:
            return JOIN.join(entries[self.start : self.end])
        pieces: list[str] = []
        at = self.start
        for first, end, unit in self.cuts:
            pieces += [*entries[at:first], *unit]
            at = end
        return JOIN.join([*pieces, *entries[at : self.end]])


def fit(text: str, limit: int, estimate: TextEstimator) -> str:
    """``text``, or its head and tail with the middle left out, estimated at most ``limit``
    tokens (a ``limit`` under the omission note's own size leaves just the note)."""
    size, keep, out = estimate(text), len(text), text
    while size > limit and keep:
        keep = keep * max(limit, 0) // size  # size > limit: keep shrinks every round
        out = cut(text, keep - keep // 3, keep // 3)
        size = estimate(out)
    return out


def plan(
    turns: Sequence[Message],
    entries: Sequence[str],
    sizes: Sequence[int],
    room: int,
    estimate: TextEstimator,
) -> list[Chunk]:
    """Consecutive chunks of whole units, each estimated at most ``room`` tokens once joined
    (one pass: a middle may hold 100,000 turns)."""
    join = estimate(JOIN) + 2  # an entry's share of the joins, and of the rounding
    chunks: list[Chunk] = []
    cuts: list[tuple[int, int, tuple[str, ...]]] = []
    start = first = total = cost = 0
    # A unit is a turn with the tool results that follow it; a final ``None`` ends the last.
    for index, message in enumerate([*turns, None]):
        if index and (message is None or message.role != "tool"):
            unit = None
            if cost > room:
                unit = _shrink(entries[first:index], sizes[first:index], room, join, estimate)
                cost = sum(map(estimate, unit)) + join * len(unit)
            if total and total + cost > room:
                chunks.append(Chunk(start, first, tuple(cuts)))
                cuts, start, total = [], first, 0
            if unit is not None:
                cuts.append((first, index, unit))
            first, total, cost = index, total + cost, 0
        if message is not None:
            cost += sizes[index] + join
    if first:
        chunks.append(Chunk(start, first, tuple(cuts)))
    return chunks


def _shrink(
    unit: Sequence[str], sizes: Sequence[int], room: int, join: int, estimate: TextEstimator
) -> tuple[str, ...]:
    """A unit over ``room`` cut to fit it: the small entries whole (the call, a short result)
    and the large ones to an equal share; when there are too many entries for even that, the
    unit as one text, its head and tail."""
    share = room - join * len(unit)
    level = _level(sizes, share)
    if level > 0:
        out = tuple(fit(entry, level, estimate) for entry in unit)
        if sum(map(estimate, out)) <= share:  # each omission note costs a few tokens
            return out
    return (fit(JOIN.join(unit), room - join, estimate),)


def _level(sizes: Sequence[int], share: int) -> int:
    """The largest cap such that the sizes, each cut to it, sum to at most ``share``."""
    left, count = share, len(sizes)
    for size in sorted(sizes):
        if size * count > left:
            return left // count
        left -= size
        count -= 1
    return max(sizes, default=0)
