"""``SessionEstimates.appended``: rows a turn just stored are counted without a read, only
when the count holds every row before them at the same version."""

from __future__ import annotations

from datetime import UTC, datetime

from compaction.core.messages import Message
from compaction.core.tokens import estimate_messages_tokens, text_estimator
from compaction.producers.estimate import SessionEstimates
from compaction.store.records import SessionInfo, StoredMessage


def rows(first: int, count: int) -> list[StoredMessage]:
    now = datetime.now(UTC)
    return [
        StoredMessage(Message(role="user", content=f"message number {seq} " * 5), seq, 0, now)
        for seq in range(first, first + count)
    ]


class Store:
    """The rows of one session's compacted view; counts its reads."""

    def __init__(self, stored: list[StoredMessage]) -> None:
        self.stored = stored
        self.reads = 0

    def newer(self, after: int) -> list[StoredMessage]:
        self.reads += 1
        return [r for r in self.stored if r.seq > after]


def count(estimates: SessionEstimates, store: Store, version: int) -> int:
    last = store.stored[-1].seq
    return estimates.of_store("s", version, last, store.newer, text_estimator())[0]


def test_a_row_appended_after_the_counted_ones_is_not_read() -> None:
    estimates, store = SessionEstimates(), Store(rows(1, 3))
    count(estimates, store, 0)
    added = rows(4, 1)
    store.stored += added
    estimates.appended(SessionInfo("s", None, None, 0, 4), added, text_estimator())
    assert count(estimates, store, 0) == estimate_messages_tokens([r.message for r in store.stored])
    assert store.reads == 1  # the first count only


def test_a_gap_or_another_version_is_read_as_before() -> None:
    estimates, store = SessionEstimates(), Store(rows(1, 3))
    count(estimates, store, 0)
    store.stored += rows(4, 2)  # seq 4 came from elsewhere; the turn stored 5
    estimates.appended(SessionInfo("s", None, None, 0, 5), store.stored[-1:], text_estimator())
    assert count(estimates, store, 0) == estimate_messages_tokens([r.message for r in store.stored])
    assert store.reads == 2
    store.stored += rows(6, 1)
    estimates.appended(SessionInfo("s", None, None, 1, 6), store.stored[-1:], text_estimator())
    assert count(estimates, store, 1) == estimate_messages_tokens([r.message for r in store.stored])
    assert store.reads == 3  # a compaction moved the version on: counted again from the start
