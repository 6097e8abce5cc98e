"""Phase 1: clear old tool outputs (compaction/core/pruning.py; docs/architecture.md, "The
algorithm", phase 1)."""

from __future__ import annotations

import pytest

from compaction.core.messages import Message
from compaction.core.pruning import PLACEHOLDER, prune, prune_cut
from tests.unit.builders import assistant, system, tool, user

P = PLACEHOLDER["en"]
LONG = "x" * 500


def run(
    messages: list[Message],
    counts: list[int] | None = None,
    *,
    head_end: int = 0,
    budget: int = 0,
    min_chars: int = 200,
) -> tuple[list[Message], list[int]]:
    return prune(
        messages,
        counts if counts is not None else [10] * len(messages),
        head_end=head_end,
        budget=budget,
        min_chars=min_chars,
        placeholder=P,
    )


def test_placeholders_exist_in_both_languages() -> None:
    assert PLACEHOLDER["zh"] == "[旧工具输出已清除以节省上下文]"  # the seed's text
    assert PLACEHOLDER["en"]


# --------------------------------------------------------------------------- prune_cut


@pytest.mark.parametrize(
    ("counts", "floor", "budget", "cut"),
    [
        ([10, 10, 10, 10, 10], 0, 25, 2),  # 10, 20, 30 > 25 at index 2
        ([10, 10, 10], 0, 20, 0),  # equal to the budget is not past it
        ([10, 10, 10], 0, 19, 1),
        ([10, 10, 10], 0, 30, 0),  # never passes: the floor
        ([10, 10, 10], 0, 1_000, 0),
        ([100, 10, 10, 10], 1, 25, 1),
        ([100, 100, 10, 10], 2, 25, 2),  # the head's tokens are not counted
        ([5, 50, 5], 0, 20, 1),
        ([10, 10, 10], 0, 0, 2),  # any message passes a zero budget
        ([], 0, 10, 0),
    ],
)
def test_prune_cut(counts: list[int], floor: int, budget: int, cut: int) -> None:
    assert prune_cut(counts, floor, budget) == cut


# --------------------------------------------------------------------------- prune


def conversation() -> list[Message]:
    return [
        system("s" * 500),  # 0  head
        user("u" * 500),  # 1  head
        assistant("a" * 500, "c1"),  # 2  (assistant: never pruned)
        tool("one" * 100, "c1"),  # 3  300 chars: pruned
        assistant("", "c2"),  # 4
        tool("y" * 200, "c2"),  # 5  exactly 200: kept
        assistant("", "c3"),  # 6
        tool("z" * 201, "c3"),  # 7  201: pruned
        user("q" * 500),  # 8  (user: never pruned)
        assistant("", "c4"),  # 9  <- cut with the counts below
        tool(LONG, "c4"),  # 10 after the cut: kept
        assistant("done"),  # 11
    ]


COUNTS = [10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10]
# from the end: 10, 20, 30 at index 9 passes a budget of 25


def test_prune_replaces_long_tool_results_before_the_cut() -> None:
    messages = conversation()
    out, pruned = run(messages, COUNTS, head_end=2, budget=25)
    assert pruned == [3, 7]
    for index in pruned:
        assert out[index].content == P
        assert out[index].original_content == messages[index].content
        assert out[index].source_text == messages[index].content
        assert out[index].role == "tool"
        assert out[index].tool_call_id == messages[index].tool_call_id
    untouched = [i for i in range(len(messages)) if i not in pruned]
    for index in untouched:
        assert out[index] is messages[index]


def two_results(first: str, second: str) -> list[Message]:
    """A user turn, an assistant calling ``a`` and ``b``, their results, the next user turn."""
    return [user(), assistant("", "a", "b"), tool(first, "a"), tool(second, "b"), user()]


def test_exactly_min_chars_is_not_pruned() -> None:
    out, pruned = run(two_results("y" * 200, "z" * 201), head_end=1)
    assert pruned == [3]
    assert out[2].content == "y" * 200
    assert out[2].original_content is None


def test_length_is_counted_in_characters() -> None:
    _, pruned = run(two_results("字" * 200, "字" * 201), head_end=1)
    assert pruned == [3]


def test_min_chars_is_configurable() -> None:
    messages = [
        user(),
        assistant("", "a", "b", "c"),
        tool("", "a"),
        tool("1", "b"),
        tool(call_id="c"),
        user(),
    ]
    _, pruned = run(messages, head_end=1, min_chars=0)
    assert pruned == [3, 4]
    _, pruned = run(messages, head_end=1, min_chars=1)
    assert pruned == [4]


def test_non_tool_messages_are_never_pruned() -> None:
    messages = [system(LONG), user(LONG), assistant(LONG), user(LONG), assistant(LONG), user()]
    out, pruned = run(messages, [1_000] * 6, head_end=0, budget=0)
    assert pruned == []
    assert out == messages


def test_head_is_never_pruned() -> None:
    messages = [
        system(),
        user(),
        assistant("", "h1"),
        tool(LONG, "h1"),  # 3: in the head (head_end = 4)
        assistant("", "m1"),
        tool(LONG, "m1"),  # 5: pruned
        user(),
        assistant(),
    ]
    out, pruned = run(messages, [100] * 8, head_end=4, budget=0)
    assert pruned == [5]
    assert out[3].content == LONG
    assert out[3].original_content is None


def test_messages_after_the_cut_are_untouched() -> None:
    messages = [
        user(),
        assistant("", "c1"),
        tool(LONG, "c1"),  # 2: before the cut
        assistant("", "c2"),  # 3: the cut (the message that passes the budget)
        tool(LONG, "c2"),  # 4: after
        assistant("", "c3"),
        tool(LONG, "c3"),  # 6: after
    ]
    counts = [10, 10, 10, 10, 10, 10, 10]
    out, pruned = run(messages, counts, head_end=1, budget=35)
    assert prune_cut(counts, 1, 35) == 3
    assert pruned == [2]
    assert out[4:] == messages[4:]


def test_tool_message_on_the_cut_is_not_pruned() -> None:
    messages = [user(), assistant("", "c1", "c2"), tool(LONG, "c1"), tool(LONG, "c2"), user()]
    counts = [10, 10, 10, 100, 10]  # from the end: 10, 110 > 50 at index 3
    _, pruned = run(messages, counts, head_end=1, budget=50)
    assert pruned == [2]


def test_already_pruned_message_is_not_pruned_again() -> None:
    earlier = tool(call_id="c1").with_content("y" * 300, original="z" * 1_000)
    messages = [user(), assistant("", "c1", "c2"), earlier, tool(LONG, "c2"), user()]
    out, pruned = run(messages, head_end=1, budget=0)
    assert pruned == [3]
    assert out[2] is earlier
    assert out[2].original_content == "z" * 1_000


def test_prune_is_idempotent() -> None:
    messages = conversation()
    once, first = run(messages, COUNTS, head_end=2, budget=25)
    twice, second = run(once, COUNTS, head_end=2, budget=25)
    assert first == [3, 7]
    assert second == []
    assert twice == once


def test_nothing_pruned_when_everything_fits() -> None:
    messages = conversation()
    out, pruned = run(messages, COUNTS, head_end=2, budget=10_000)
    assert pruned == []
    assert out == messages


def test_input_list_is_not_modified() -> None:
    messages = conversation()
    before = list(messages)
    out, _ = run(messages, COUNTS, head_end=2, budget=25)
    assert messages == before
    assert out is not messages
    assert len(out) == len(messages)


def test_zh_placeholder() -> None:
    messages = [user(), assistant("", "c1"), tool(LONG, "c1"), user()]
    out, _ = prune(
        messages, [10] * 4, head_end=1, budget=0, min_chars=200, placeholder=PLACEHOLDER["zh"]
    )
    assert out[2].content == "[旧工具输出已清除以节省上下文]"
    assert out[2].original_content == LONG
