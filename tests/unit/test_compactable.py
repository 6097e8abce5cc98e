"""``compactable()``: whether ``/compact`` finds something to summarize, checked against what a
manual ``compact()`` does (docs/architecture.md, "The algorithm", phase 2)."""

from __future__ import annotations

import pytest

from compaction.core.boundaries import compactable
from compaction.core.config import CompactionConfig
from compaction.core.engine import compact
from compaction.core.errors import NothingToCompact
from tests.fakes import FakeSummarizer
from tests.unit.builders import assistant, convo, system, user

COMPACTABLE = [
    # (spec, protect_first_n, compactable): at default settings the tail is min_tail_messages (3)
    ("", 3, False),
    ("S U A", 3, False),  # all head
    ("S U A U A A", 3, False),  # head and minimal tail, nothing between
    ("S U A U A U A", 3, False),  # the last user message leaves one message between
    ("S U A U A U A", 1, True),
    ("S U A U A U A U", 3, True),
    ("S U A A A U A A", 3, True),
    ("S U A:c1 T:c1 A", 3, False),  # the head grows over T:c1
    ("S U A:c1,c2 T:c1 T:c2 A U A", 3, False),
    ("S U A:c1 T:c1 A U A U A", 3, True),
    ("S Z U A A", 3, False),  # only an earlier summary between
    ("S U A Z Z U A A", 3, False),  # only earlier summaries between
    ("S U A Z A U A A", 3, True),  # an earlier summary and a message: folded together
    ("U A U A U A U A", 3, True),  # no system prompt
]


@pytest.mark.parametrize(
    ("spec", "protect", "expected"), COMPACTABLE, ids=[f"{c[0]}/{c[1]}" for c in COMPACTABLE]
)
def test_compactable_is_what_manual_compact_does(spec: str, protect: int, expected: bool) -> None:
    """``compactable`` (asked by the producers and the worker) answers what ``/compact`` would
    do: a summary, or nothing_to_compact (issue 12, "/compact always compacts")."""
    config = CompactionConfig(protect_first_n=protect)
    messages = convo(spec)
    assert compactable(messages, config) is expected
    try:
        compact(messages, config, FakeSummarizer(), reason="manual")
    except NothingToCompact:
        assert not expected
    else:
        assert expected


def test_compactable_when_compact_summarizes_with_the_tail_budget() -> None:
    """The tail budget keeps what follows the big user message, the minimal tail only x y z:
    either way the middle is the two messages before the user message (3 and 4)."""
    messages = [
        system("sys"),
        *(user("hi"), assistant("a"), assistant("b"), assistant("c")),
        user("u " * 60_000),  # ~30k tokens: over the 28k tail budget, so the budget stops after it
        assistant("w " * 10_000),
        *(assistant(text) for text in "xyz"),
    ]
    config = CompactionConfig()
    assert compact(messages, config, FakeSummarizer(), reason="manual").middle == (3, 5)
    assert compactable(messages, config)
