"""The turns to summarize, gathered in one pass, and cache-sized blocks (compaction/turns.py)."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from compaction.turns import Turns, blocks
from tests.unit.builders import assistant, call, summary, tool, user


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


def test_turns_skip_summaries_and_collect_what_the_steps_read() -> None:
    pruned = tool("c1", "[cleared]", original_content="Traceback: boom")
    messages = [
        summary("earlier"),
        user("run it"),
        assistant("on it", [call("c1", "bash", '{"command": "make"}')]),
        pruned,
        assistant("done"),
    ]
    turns = Turns.of(messages)
    assert turns.messages == messages[1:]
    assert turns.texts == ["run it", "on it", '{"command": "make"}', "Traceback: boom", "done"]
    assert turns.spoken == ["run it", "Traceback: boom"]  # originals, user and tool only
    assert [c.id for c in turns.calls] == ["c1"]


@given(st.lists(st.text(alphabet="ab c\n\t日", max_size=30), max_size=40))
def test_distinct_words_are_every_word_once_in_order_of_first_appearance(
    texts: list[str],
) -> None:
    turns = Turns.of([user(t) for t in texts])
    assert turns.distinct_words() == list(dict.fromkeys(" ".join(texts).split()))
