"""Cache-sized blocks of text.

Whole-middle text work is done block by block: one joined string of a 100,000-message middle
streams tens of megabytes through memory on every pass; a block of a few hundred kilobytes
stays in the processor's cache.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Sequence
from itertools import accumulate

#: Characters per block: small enough for the cache, large enough that per-block calls are few.
BLOCK_CHARS = 256 * 1024


def blocks(texts: Sequence[str], chars: int = BLOCK_CHARS) -> Iterator[Sequence[str]]:
    """Consecutive slices of ``texts`` of about ``chars`` characters each (a longer text is a
    block of its own); nothing when ``texts`` is empty."""
    # Running totals and a binary search per block: no Python step per text.
    ends = list(accumulate(map(len, texts)))
    start = 0
    while start < len(texts):
        base = ends[start - 1] if start else 0
        stop = bisect_right(ends, base + chars, lo=start + 1)
        yield texts[start:stop]
        start = stop
