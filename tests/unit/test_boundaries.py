"""Phase 2: where the middle starts and ends (compaction/core/boundaries.py; docs/architecture.md,
"The algorithm")."""

from __future__ import annotations

import pytest

from compaction.core.boundaries import Bounds, compactable, find_bounds, head_end, tail_start
from compaction.core.config import CompactionConfig
from compaction.core.engine import compact
from compaction.core.errors import NothingToCompact
from compaction.core.messages import Message
from tests.fakes import FakeSummarizer
from tests.unit.builders import assistant, convo, system, user


def tens(messages: list[Message]) -> list[int]:
    return [10] * len(messages)


# --------------------------------------------------------------------------- head_end


@pytest.mark.parametrize(
    ("spec", "protect", "expected"),
    [
        ("S U A U A", 3, 3),
        ("S U A:c1,c2 T:c1 T:c2 A U", 3, 5),  # extends past the results of a head call
        ("S U A:c1 T:c1 U A", 3, 4),
        ("S U A:c1 T:c1", 3, 4),  # extends to the end
        ("S U", 3, 2),  # shorter than protect_first_n
        ("", 3, 0),
        ("S U A U", 1, 1),
        ("A:c1 T:c1 U A", 1, 2),
        ("S U A U A U A U A U A U", 10, 10),
    ],
)
def test_head_end(spec: str, protect: int, expected: int) -> None:
    assert head_end(convo(spec), protect) == expected


@pytest.mark.parametrize(
    ("spec", "protect", "expected"),
    [
        ("S Z A U A", 3, 1),  # stops before an earlier summary in the first N
        ("Z A U A", 3, 0),
        ("S U Z A U", 3, 2),
        ("S U A Z U A", 3, 3),  # a summary after the first N does not matter
        ("S Z A U Z A", 5, 1),  # the first summary wins
    ],
)
def test_head_end_stops_before_a_summary(spec: str, protect: int, expected: int) -> None:
    assert head_end(convo(spec), protect) == expected


@pytest.mark.parametrize(
    ("spec", "protect", "expected"),
    [
        ("S S S S U A", 3, 4),  # every leading system message is head, whatever N says
        ("S S S S", 3, 4),
        ("S S U A", 1, 2),
        ("S S Z U A", 1, 2),
        ("S Z S U", 3, 1),  # the summary ends the leading run; the head stops before it
    ],
)
def test_head_end_keeps_all_leading_system_messages(spec: str, protect: int, expected: int) -> None:
    assert head_end(convo(spec), protect) == expected


# --------------------------------------------------------------------------- tail_start


def tail_of_ten(budget: int, min_messages: int) -> int:
    """Where the tail of ``S U A U A U A U A U`` starts (ten tokens a message, a head of 3)."""
    messages = convo("S U A U A U A U A U")
    return tail_start(messages, tens(messages), budget, min_messages, 3)


def test_tail_is_what_fits_the_budget() -> None:
    assert tail_of_ten(30, 1) == 7
    assert tail_of_ten(39, 1) == 7
    assert tail_of_ten(40, 1) == 6


def test_budget_stops_at_the_first_message_that_does_not_fit() -> None:
    messages = convo("S U A U A U A U")
    counts = [10, 10, 10, 10, 10, 500, 10, 10]
    assert tail_start(messages, counts, 100, 1, 3) == 6


def test_tail_has_at_least_min_messages() -> None:
    assert tail_of_ten(0, 3) == 7
    assert tail_of_ten(0, 5) == 5
    assert tail_of_ten(10, 1) == 9


def test_one_huge_last_message_is_still_the_tail() -> None:
    messages = convo("S U A U A U")
    counts = [10, 10, 10, 10, 10, 100_000]
    assert tail_start(messages, counts, 100, 1, 3) == 5


def test_tail_never_starts_on_a_tool_message() -> None:
    messages = convo("S U A U A:c1,c2 T:c1 T:c2 U A")
    # the budget alone would start the tail at 6 (T:c2): moved back to the calling assistant
    assert tail_start(messages, tens(messages), 30, 1, 3) == 4
    assert messages[4].tool_calls


def test_min_messages_landing_on_a_tool_moves_back() -> None:
    messages = convo("S U A U A:c1 T:c1 U A")
    assert tail_start(messages, tens(messages), 0, 3, 3) == 4


def test_tail_never_goes_below_the_head() -> None:
    messages = convo("S U A U A")
    assert tail_start(messages, tens(messages), 10_000, 1, 3) == 3
    assert tail_start(messages, tens(messages), 0, 3, 4) == 4  # min messages cannot push it


def test_moving_back_over_tools_stops_at_the_floor() -> None:
    messages = convo("S U A:c1,c2 T:c1 T:c2")
    assert tail_start(messages, tens(messages), 10, 1, 2) == 2


# --------------------------------------------------------------------------- find_bounds


def bounds_of(
    messages: list[Message],
    counts: list[int] | None = None,
    *,
    protect: int = 3,
    budget: int = 20,
    min_tail: int = 1,
) -> Bounds:
    return find_bounds(
        messages,
        counts if counts is not None else tens(messages),
        protect_first_n=protect,
        tail_budget=budget,
        min_tail_messages=min_tail,
    )


def test_last_user_near_the_tail_pulls_the_tail_back() -> None:
    messages = convo("S U A A A A U A A")
    # budget alone: tail at 7; the user at 6 would be summarized; before it (3..5) is more
    # than after it (nothing), so the tail moves back to it.
    assert bounds_of(messages) == Bounds(3, 6)


def test_the_loop_after_the_request_is_never_the_history_middle() -> None:
    messages = convo("S U A U A A A A A A")
    # budget alone: tail at 8; the loop after the request at 3 is the loop stage's, so the
    # tail moves back to the request and the history has nothing between.
    assert bounds_of(messages) == Bounds(3, 3)


def test_last_user_on_a_tie_moves_the_tail() -> None:
    messages = convo("S U A A U A A A")
    # tail at 6; user at 4: before (3) == after (5) == 10 tokens
    assert bounds_of(messages) == Bounds(3, 4)


def test_the_tail_moves_back_to_the_request_whatever_the_tokens() -> None:
    messages = convo("S U A A A U A A A")
    heavy_before = [10, 10, 10, 100, 100, 10, 10, 10, 10]
    heavy_after = [10, 10, 10, 1, 1, 10, 100, 100, 10]
    assert bounds_of(messages, heavy_before) == Bounds(3, 5)
    assert bounds_of(messages, heavy_after, budget=10) == Bounds(3, 5)


def test_a_history_too_short_leaves_the_loop_to_its_own_stage() -> None:
    """One message between the head and the request: the history stage has nothing, the loop
    (five steps, three kept) has two older ones, so the session is compactable."""
    big = [system("sys"), user("hi"), assistant("a"), assistant("b " * 60_000), user("next")]
    messages = [*big, *(assistant(text) for text in "vwxyz")]
    with pytest.raises(NothingToCompact):
        compact(messages, CompactionConfig(), FakeSummarizer(), reason="manual")
    assert compactable(messages, CompactionConfig())
    assert not compactable(messages[:-2], CompactionConfig())


def test_a_summary_is_not_the_users_message() -> None:
    messages = convo("S U A U A Z A A A A")
    # The real user is 3: the tail moves back to it. Were the summary at 5 taken for the
    # user's, the tail would have stopped at 5.
    assert bounds_of(messages) == Bounds(3, 3)


def test_head_growth_does_not_keep_an_earlier_summary() -> None:
    # After a first compaction: [S U A] + summary + [U2 ...]; the agent then worked on.
    messages = convo("S U A Z U A A A A A")
    bounds = bounds_of(messages)
    assert bounds.head_end <= 3  # the summary at 3 is in the middle, to be folded


CASES = [
    # (spec, protect_first_n, tail_budget, min_tail_messages, head_end, tail_start)
    ("S U A U A U A U A U", 3, 30, 3, 3, 7),
    ("S U A U", 3, 30, 3, 3, 3),  # nothing in between
    ("S U A:c1,c2 T:c1 T:c2 A U A U A", 3, 20, 2, 5, 8),  # head grows over the tool results
    ("S Z A U A U A U", 3, 20, 2, 1, 6),  # the earlier summary goes into the middle
    ("S U A U A:c1 T:c1 A:c2 T:c2 U A", 3, 30, 3, 3, 6),  # tail moved back over T:c2
    ("S U A U A:c1 T:c1 A:c2 T:c2 A A", 3, 20, 1, 3, 3),  # the loop after 3 is not history
    ("S U A U A U A U A U", 3, 10_000, 3, 3, 3),  # everything fits
    ("S U A U A U A A A A A", 3, 10, 1, 3, 5),  # the tail moves back to the user at 5
    ("S U A A A A U A A", 3, 20, 1, 3, 6),  # tail moves back to the user at 6
    ("S U A U Z A A A", 3, 20, 2, 3, 3),  # the summary at 4 is not the user's
    ("S U A A A A A", 3, 20, 1, 3, 3),  # last user in the head: all loop, no history
    ("S S S S U A U A", 3, 10, 1, 4, 6),  # leading system messages all stay in the head
    ("S S Z U A U A A", 1, 20, 1, 2, 5),  # the summary after the system prompt is middle
    ("", 3, 30, 3, 0, 0),
]


@pytest.mark.parametrize(
    ("spec", "protect", "budget", "min_tail", "head", "tail"),
    CASES,
    ids=[c[0] or "empty" for c in CASES],
)
def test_find_bounds(
    spec: str, protect: int, budget: int, min_tail: int, head: int, tail: int
) -> None:
    messages = convo(spec)
    bounds = bounds_of(messages, protect=protect, budget=budget, min_tail=min_tail)
    assert bounds == Bounds(head, tail)
    assert bounds.middle_size == tail - head
    # invariants
    assert 0 <= bounds.head_end <= bounds.tail_start <= len(messages)
    if bounds.tail_start < len(messages):
        assert messages[bounds.tail_start].role != "tool"
    if bounds.head_end < len(messages):
        assert messages[bounds.head_end].role != "tool"
    users = [i for i, m in enumerate(messages) if m.role == "user" and not m.is_summary]
    if users:
        assert not bounds.head_end <= users[-1] < bounds.tail_start  # never summarized


def test_middle_size_is_never_negative() -> None:
    assert Bounds(5, 3).middle_size == 0
    assert Bounds(3, 3).middle_size == 0
    assert Bounds(3, 7).middle_size == 4


# --------------------------------------------------------------------------- compactable
