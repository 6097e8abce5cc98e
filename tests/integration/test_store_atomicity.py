"""Compaction write-back, all or nothing (docs/architecture.md, "Tables"): a failure at any
statement of the transaction, with a summary or for phase 1 alone, or at the commit, changes
nothing and leaves the session writable; of two writers holding one version, one wins and the
other is ``lock_lost``. On SQLite and on PostgreSQL; the hooks that fail or hold a statement
listen on ``engine``, the very engine of the ``store``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import Engine, event

from compaction.core.errors import DatabaseError, LockLost
from compaction.store import AppliedCompaction, CompactionWrite, EventRow, Store
from tests.fakes import FakeSummarizer
from tests.integration.helpers import (
    PRUNING,
    InjectedFailure,
    Planned,
    Statement,
    driver_error,
    failed_run,
    failing,
    messages_of,
    new_session,
    phase_one,
    plan,
    pruning_conversation,
    seed_forty,
    snapshot,
)

DONE = EventRow("Context compacted")


def planned(store: Store, session_id: str, summarized: bool) -> Planned:
    if summarized:
        return plan(store, session_id, PRUNING, event=DONE)
    return phase_one(store, session_id, DONE)


# --- a failure inside the write-back transaction ------------------------------------------

FAILURE_POINTS: dict[str, tuple[Callable[[Statement], bool], int]] = {
    # (which statement fails, the how-many-th of its kind)
    "version_update": (lambda s: s.is_update_of("chat_session", "compaction_version"), 1),
    "run_insert": (lambda s: s.is_insert_into("compaction_run"), 1),
    "summary_insert": (lambda s: s.is_insert_into("message"), 1),
    "compacted_update": (lambda s: s.is_update_of("message", "compacted_at"), 1),
    "pruned_update": (lambda s: s.is_update_of("message", "pruned_at"), 1),
    # the done event row: the last statement of the transaction
    "event_insert": (lambda s: s.is_insert_into("message"), 2),
}
#: Phase 1 alone inserts no summary: its done event row is its first message INSERT.
PHASE_ONE_POINTS = {
    **{p: FAILURE_POINTS[p] for p in ("version_update", "run_insert", "pruned_update")},
    "event_insert": (lambda s: s.is_insert_into("message"), 1),
}
SUMMARY_OR_NOT = ((True, "summary"), (False, "phase_one"))
EVERY_STATEMENT = [
    *[pytest.param(True, p, id=f"summary-{p}") for p in FAILURE_POINTS],
    *[pytest.param(False, p, id=f"phase_one-{p}") for p in PHASE_ONE_POINTS],
]


@pytest.mark.parametrize(("summarized", "point"), EVERY_STATEMENT)
def test_driver_failure_inside_write_back_changes_nothing(
    store: Store, engine: Engine, summarized: bool, point: str
) -> None:
    session_id, _ = new_session(store, pruning_conversation())
    store.append_event(session_id, "start", "Compacting…")
    store.record_failed_run(failed_run(session_id))
    write = planned(store, session_id, summarized)
    assert write.plan.pruned_ids, "the plan must persist pruning for every point to be hit"
    before = snapshot(engine)
    view = messages_of(store.load_history(session_id))

    matches, nth = (FAILURE_POINTS if summarized else PHASE_ONE_POINTS)[point]
    with (
        failing(engine, matches, nth=nth, error=lambda: driver_error(engine)),
        pytest.raises(DatabaseError) as err,
    ):
        store.apply_compaction(write.plan)
    assert err.value.code == "db_error"
    assert str(err.value) == "database error: injected failure"  # no statement, no values

    assert snapshot(engine) == before
    assert messages_of(store.load_history(session_id)) == view
    # The session is not stuck: the same plan (same version) goes through now.
    applied = store.apply_compaction(write.plan)
    assert applied.version == 1
    assert messages_of(store.load_history(session_id)) == write.expected_view(applied)


@pytest.mark.parametrize(
    ("summarized", "point"),
    [
        *[pytest.param(True, p, id=f"summary-{p}") for p in ("compacted_update", "pruned_update")],
        *[pytest.param(s, "run_insert", id=f"{n}-run_insert") for s, n in SUMMARY_OR_NOT],
        pytest.param(False, "pruned_update", id="phase_one-pruned_update"),
    ],
)
def test_any_exception_inside_write_back_changes_nothing(
    store: Store, engine: Engine, point: str, summarized: bool
) -> None:
    """Not only driver errors: whatever is raised mid-transaction (here from a statement hook)
    rolls everything back and reaches the caller."""
    session_id, _ = new_session(store, pruning_conversation())
    write = planned(store, session_id, summarized)
    before = snapshot(engine)
    matches, nth = FAILURE_POINTS[point]
    with failing(engine, matches, nth=nth), pytest.raises((InjectedFailure, DatabaseError)):
        store.apply_compaction(write.plan)
    assert snapshot(engine) == before
    applied = store.apply_compaction(write.plan)
    assert messages_of(store.load_history(session_id)) == write.expected_view(applied)


def test_failure_at_commit_changes_nothing(store: Store, engine: Engine) -> None:
    session_id, _ = new_session(store, pruning_conversation())
    write = planned(store, session_id, summarized=True)
    before = snapshot(engine)

    def refuse(_conn: Any) -> None:
        raise InjectedFailure("commit refused")

    event.listen(engine, "commit", refuse)
    try:
        with pytest.raises((InjectedFailure, DatabaseError)):
            store.apply_compaction(write.plan)
    finally:
        event.remove(engine, "commit", refuse)
    assert snapshot(engine) == before
    store.apply_compaction(write.plan)


# --- two writers, one version -------------------------------------------------------------


def _summarizer(name: str) -> FakeSummarizer:
    return FakeSummarizer(f"## Goal\nWritten by writer {name}.\n" + "detail " * 40)


Outcome = AppliedCompaction | BaseException


def _race(
    store: Store, engine: Engine, writes: dict[str, CompactionWrite]
) -> tuple[dict[str, Outcome], dict[str, float], dict[str, float]]:
    """Apply the writes at once, each in a thread of its name: what each got, when its fencing
    UPDATE returned and when it began to commit. Each holds the session's lock a while after
    that UPDATE, so the other really waits on it (SQLite: BEGIN IMMEDIATE; PostgreSQL: the
    UPDATE's row lock)."""
    barrier = threading.Barrier(len(writes))
    outcomes: dict[str, Outcome] = {}
    fenced: dict[str, float] = {}
    committing: dict[str, float] = {}

    def hold(_conn: Any, _cursor: Any, sql: str, _params: Any, _ctx: Any, _many: bool) -> None:
        name = threading.current_thread().name
        # the fence: an UPDATE of its own, or the CTE of one statement with the summary
        if name in writes and Statement(sql, 0, False).is_update_of("chat_session", "version"):
            fenced[name] = time.monotonic()
            time.sleep(0.3)

    def commit(_conn: Any) -> None:
        committing[threading.current_thread().name] = time.monotonic()

    def write(name: str) -> None:
        barrier.wait(timeout=10)
        try:
            outcomes[name] = store.apply_compaction(writes[name])
        except BaseException as err:  # the test inspects it
            outcomes[name] = err

    threads = [threading.Thread(target=write, args=(name,), name=name) for name in writes]
    event.listen(engine, "after_cursor_execute", hold)
    event.listen(engine, "commit", commit)
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
    finally:
        event.remove(engine, "after_cursor_execute", hold)
        event.remove(engine, "commit", commit)
    assert not any(t.is_alive() for t in threads)
    return outcomes, fenced, committing


@pytest.mark.parametrize("plans", ["same_plan", "two_plans"])
def test_two_writers_with_one_version_one_wins(store: Store, engine: Engine, plans: str) -> None:
    session_id, _ = new_session(store, seed_forty())
    first = plan(store, session_id, summarizer=_summarizer("a"))
    second = first if plans == "same_plan" else plan(store, session_id, summarizer=_summarizer("b"))
    assert first.plan.expected_version == second.plan.expected_version == 0
    before = snapshot(engine)

    outcomes, fenced, committing = _race(store, engine, {"a": first.plan, "b": second.plan})

    won = {n: o for n, o in outcomes.items() if isinstance(o, AppliedCompaction)}
    lost = {n: o for n, o in outcomes.items() if not isinstance(o, AppliedCompaction)}
    assert len(won) == 1 and len(lost) == 1, outcomes
    ((loser_name, loser),) = lost.items()
    assert isinstance(loser, LockLost), repr(loser)
    assert loser.code == "lock_lost"
    ((winner_name, applied),) = won.items()
    # The loser's UPDATE went through only once the winner was committing: it waited on the
    # lock, then found the version moved.
    assert committing[winner_name] < fenced[loser_name], (committing, fenced)
    winner = first if winner_name == "a" else second

    full = store.load_history(session_id, "full")
    summaries = [s for s in full if s.is_compaction_summary]
    assert [s.id for s in summaries] == [applied.summary_message_id]
    assert summaries[0].message.content == winner.result.summary_text
    assert messages_of(store.load_history(session_id)) == winner.expected_view(applied)
    assert store.get_session(session_id).compaction_version == 1
    assert [r.status for r in store.runs(session_id)] == ["succeeded"]
    after = snapshot(engine)
    assert len(after["message"]) == len(before["message"]) + 1
    assert len(after["compaction_run"]) == len(before["compaction_run"]) + 1
