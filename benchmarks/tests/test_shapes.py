"""``benchmarks.shapes``: deterministic, well-formed conversations of each shape."""

from __future__ import annotations

import re

import pytest

from benchmarks import shapes
from compaction.core.tokens import estimate_messages_tokens


@pytest.mark.parametrize("name", sorted(shapes.SHAPES))
def test_same_seed_same_messages_other_seed_differs(name: str) -> None:
    make = shapes.SHAPES[name]
    assert make() == make()
    assert make(seed=7) != make()  # type: ignore[call-arg]


@pytest.mark.parametrize("name", sorted(shapes.SHAPES))
def test_every_tool_call_answered_right_after_it(name: str) -> None:
    messages = shapes.generate(name)
    assert [m.id for m in messages] == list(range(1, len(messages) + 1))
    pending: list[str] = []
    for message in messages:
        if message.role == "tool":
            assert message.tool_call_id == pending.pop(0)
            continue
        assert not pending, f"unanswered tool calls before message {message.id}"
        pending = [c.id for c in message.tool_calls]
    assert not pending
    assert estimate_messages_tokens(messages) > 50_000  # over the benchmark's threshold's reach


def test_research_holds_hundreds_of_distinct_urls() -> None:
    text = "\n".join(m.content for m in shapes.generate("research"))
    assert len(set(re.findall(r"https://\S+", text))) >= 250


def test_subagent_has_one_user_turn_and_reasoning_long_thinking() -> None:
    assert [m.role for m in shapes.generate("subagent")].count("user") == 1
    thinking = [m.content for m in shapes.generate("reasoning") if "<think>" in m.content]
    assert len(thinking) > 50 and min(map(len, thinking)) > 1_500
