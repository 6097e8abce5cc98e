"""Incremental estimates for the per-turn threshold check."""

from __future__ import annotations

from datetime import UTC, datetime

from compaction.core.messages import Message
from compaction.core.tokens import estimate_messages_tokens, text_estimator
from compaction.producers.estimate import SessionEstimates
from compaction.store.records import StoredMessage
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


# --- the store path: rows counted once, the leading system rows apart --------------------------


def rows(messages: list[Message], first_seq: int = 1) -> list[StoredMessage]:
    now = datetime.now(UTC)
    return [StoredMessage(m, first_seq + i, 0, now) for i, m in enumerate(messages)]


class Table:
    """A session's stored rows, and the reads of those after a seq."""

    def __init__(self, messages: list[Message]) -> None:
        self.rows = rows(messages)
        self.reads: list[int] = []

    def append(self, messages: list[Message]) -> None:
        self.rows += rows(messages, first_seq=len(self.rows) + 1)

    def newer(self, after: int) -> list[StoredMessage]:
        self.reads.append(after)
        return [row for row in self.rows if row.seq > after]

    def count(self, estimates: SessionEstimates, version: int = 0) -> tuple[int, int]:
        return estimates.of_store("s", version, len(self.rows), self.newer, text_estimator())


def system(chars: int) -> Message:
    return Message(role="system", content="s" * chars)


def test_stored_rows_are_read_once_and_the_leading_system_rows_counted_apart() -> None:
    estimates, table = SessionEstimates(), Table([system(400)])
    assert table.count(estimates) == (110, 110)
    table.append([system(800)])
    assert table.count(estimates) == (320, 320)  # still leading: the prompt grew
    table.append(conversation(3, system=False))
    total = estimate_messages_tokens([r.message for r in table.rows])
    assert table.count(estimates) == (total, 320)
    table.append([system(4_000)])  # after the conversation began: not the prompt
    assert table.count(estimates) == (total + 1_010, 320)
    assert table.count(estimates) == (total + 1_010, 320)  # nothing new: nothing read
    assert table.reads == [0, 1, 2, 14]


def test_a_new_version_counts_again_from_the_first_row() -> None:
    estimates, table = SessionEstimates(), Table(conversation(3))
    first = table.count(estimates)
    table.rows = table.rows[:1]  # a compaction: fewer rows, a new version
    assert table.count(estimates, version=1) == (first[1], first[1])
    assert table.reads == [0, 0]
    estimates.forget("s")
    assert table.count(estimates, version=1) == (first[1], first[1])
    assert table.reads == [0, 0, 0]
