"""``producers.standing.StandingCounts``: a session's standing compactions read once per
version, read again once a compaction or a restore bumps it."""

from __future__ import annotations

from typing import Any, cast

from compaction.producers.standing import StandingCounts
from compaction.store import SessionInfo, Store


class CountingStore:
    def __init__(self) -> None:
        self.counts = {"s1": 2, "s2": 0}
        self.reads = 0

    def compaction_counts(self, session_ids: list[str]) -> dict[str, int]:
        self.reads += 1
        return {s: self.counts[s] for s in session_ids if self.counts[s]}


def info(session_id: str, version: int) -> SessionInfo:
    return SessionInfo(session_id, None, None, version, 10)


def test_one_read_per_session_version() -> None:
    fake = CountingStore()
    store = cast(Store, cast(Any, fake))
    standing = StandingCounts()
    assert standing.of(store, info("s1", 3)) == 2
    assert standing.of(store, info("s1", 3)) == 2
    assert standing.of(store, info("s2", 0)) == 0  # none standing: 0, not missing
    assert standing.of(store, info("s2", 0)) == 0
    assert fake.reads == 2
    fake.counts["s1"] = 1  # a restore: the version moves on
    assert standing.of(store, info("s1", 4)) == 1
    assert fake.reads == 3
