"""Cache-sized blocks of text (compaction/core/blocks.py)."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from compaction.core.blocks import blocks


@given(st.lists(st.text(max_size=40), max_size=60), st.integers(min_value=1, max_value=100))
def test_blocks_cover_the_texts_in_order_within_the_size(texts: list[str], chars: int) -> None:
    parts = list(blocks(texts, chars))
    assert [t for part in parts for t in part] == texts
    assert all(part for part in parts)
    # A block goes over the size only when it is a single longer text.
    assert all(sum(map(len, part)) <= chars or len(part) == 1 for part in parts)
    # Each block takes as much as fits: with the next text it would be over the size.
    for part, following in pairwise(parts):
        assert sum(map(len, part)) + len(following[0]) > chars


def test_blocks_of_nothing() -> None:
    assert list(blocks([])) == []
