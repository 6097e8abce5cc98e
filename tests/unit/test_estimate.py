"""Incremental estimates for the per-turn threshold check."""

from __future__ import annotations

from compaction.tokens import estimate_messages_tokens, text_estimator
from producers.estimate import SessionEstimates
from tests.fakes import conversation


class Counting:
    def __init__(self) -> None:
        self.calls = 0
        self.inner = text_estimator()

    def __call__(self, text: str) -> int:
        self.calls += 1
        return self.inner(text)


def test_unchanged_messages_are_not_estimated_again() -> None:
    estimates, counting = SessionEstimates(), Counting()
    messages = conversation(500)
    first = estimates.of_messages("s", messages, counting)
    calls = counting.calls
    assert estimates.of_messages("s", messages, counting) == first
    assert counting.calls == calls  # nothing re-estimated


def test_appended_messages_cost_only_themselves() -> None:
    estimates, counting = SessionEstimates(), Counting()
    messages = conversation(100)
    estimates.of_messages("s", messages, counting)
    extra = conversation(2, system=False, first_turn=100)
    before = counting.calls
    total = estimates.of_messages("s", [*messages, *extra], counting)
    assert total == estimate_messages_tokens([*messages, *extra])
    assert counting.calls - before == sum(1 + len(m.tool_calls) for m in extra)


def test_a_changed_prefix_is_estimated_from_the_change() -> None:
    estimates = SessionEstimates()
    messages = conversation(50)
    estimates.of_messages("s", messages, text_estimator())
    edited = [*messages[:10], *conversation(5, first_turn=200)]
    assert estimates.of_messages("s", edited, text_estimator()) == estimate_messages_tokens(edited)


def test_sessions_are_separate() -> None:
    estimates = SessionEstimates()
    a, b = conversation(3), conversation(30)
    assert estimates.of_messages("a", a, text_estimator()) == estimate_messages_tokens(a)
    assert estimates.of_messages("b", b, text_estimator()) == estimate_messages_tokens(b)
