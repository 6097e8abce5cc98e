"""Compaction write-back (seed §5, §9, §10; DESIGN §5, §7): one transaction or nothing, fenced
by the session's version, marked by range; bad input refused with a code. Restoring is in
test_store_runs.py.

Every test runs against SQLite and against the real PostgreSQL database (``store`` and
``engine`` fixtures share one engine, so listeners on ``engine`` see the store's statements).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from sqlalchemy import Engine, event

from compaction import CompactionConfig, InvalidRequest
from compaction.errors import CompactionError, DatabaseError, LockLost, SessionNotFound
from store import AppliedCompaction, Store
from tests.fakes import FakeSummarizer, conversation
from tests.integration.helpers import (
    MAX_PARAMETERS,
    PRUNING,
    InjectedFailure,
    Statement,
    compact_session,
    driver_error,
    failing,
    messages_of,
    new_session,
    plan,
    pruning_conversation,
    recorded,
    seed_forty,
    snapshot,
)

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


@pytest.mark.parametrize("point", list(FAILURE_POINTS))
def test_driver_failure_inside_write_back_changes_nothing(
    store: Store, engine: Engine, point: str
) -> None:
    session_id, _ = new_session(store, pruning_conversation())
    store.append_event(session_id, "start", "Compacting…")
    store.record_failed_run(session_id, reason="auto", code="llm_timeout", error="slow")
    planned = plan(store, session_id, PRUNING, event_text="Context compacted")
    assert planned.plan.pruned_ids, "the plan must persist pruning for every point to be hit"
    before = snapshot(engine)
    view = messages_of(store.load_history(session_id))

    matches, nth = FAILURE_POINTS[point]
    with (
        failing(engine, matches, nth=nth, error=lambda: driver_error(engine)),
        pytest.raises(DatabaseError) as err,
    ):
        store.apply_compaction(planned.plan)
    assert err.value.code == "db_error"
    assert str(err.value) == "database error: injected failure"  # no statement, no values

    assert snapshot(engine) == before
    assert messages_of(store.load_history(session_id)) == view
    # The session is not stuck: the same plan (same version) goes through now.
    applied = store.apply_compaction(planned.plan)
    assert applied.version == 1
    assert messages_of(store.load_history(session_id)) == planned.expected_view(applied)


@pytest.mark.parametrize("point", ["compacted_update", "pruned_update", "run_insert"])
def test_any_exception_inside_write_back_changes_nothing(
    store: Store, engine: Engine, point: str
) -> None:
    """Not only driver errors: whatever is raised mid-transaction (here from a statement hook)
    rolls everything back and reaches the caller."""
    session_id, _ = new_session(store, pruning_conversation())
    planned = plan(store, session_id, PRUNING, event_text="Context compacted")
    before = snapshot(engine)
    matches, nth = FAILURE_POINTS[point]
    with failing(engine, matches, nth=nth), pytest.raises((InjectedFailure, DatabaseError)):
        store.apply_compaction(planned.plan)
    assert snapshot(engine) == before
    applied = store.apply_compaction(planned.plan)
    assert messages_of(store.load_history(session_id)) == planned.expected_view(applied)


def test_failure_at_commit_changes_nothing(store: Store, engine: Engine) -> None:
    session_id, _ = new_session(store, pruning_conversation())
    planned = plan(store, session_id, PRUNING, event_text="Context compacted")
    before = snapshot(engine)

    def refuse(_conn: Any) -> None:
        raise InjectedFailure("commit refused")

    event.listen(engine, "commit", refuse)
    try:
        with pytest.raises((InjectedFailure, DatabaseError)):
            store.apply_compaction(planned.plan)
    finally:
        event.remove(engine, "commit", refuse)
    assert snapshot(engine) == before
    store.apply_compaction(planned.plan)


# --- two writers, one version -------------------------------------------------------------


def _summarizer(name: str) -> FakeSummarizer:
    return FakeSummarizer(f"## Goal\nWritten by writer {name}.\n" + "detail " * 40)


@pytest.mark.parametrize("plans", ["same_plan", "two_plans"])
def test_two_writers_with_one_version_one_wins(store: Store, engine: Engine, plans: str) -> None:
    session_id, _ = new_session(store, seed_forty())
    first = plan(store, session_id, summarizer=_summarizer("a"))
    second = first if plans == "same_plan" else plan(store, session_id, summarizer=_summarizer("b"))
    assert first.plan.expected_version == second.plan.expected_version == 0
    before = snapshot(engine)

    # Whoever takes the session's lock first holds it a while, so the other one really waits
    # on it (SQLite: BEGIN IMMEDIATE; PostgreSQL: the fencing UPDATE's row lock), then sees
    # version 1.
    # ``locked`` records, per writer, how long after the start it held the lock.
    barrier = threading.Barrier(2)
    outcomes: dict[str, AppliedCompaction | BaseException] = {}
    locked: dict[str, float] = {}
    started: dict[str, float] = {}

    def hold(_conn: Any, _cursor: Any, sql: str, _params: Any, _ctx: Any, _many: bool) -> None:
        normalized = " ".join(sql.split()).lower()
        name = threading.current_thread().name
        if name in started and normalized.startswith("update chat_session "):
            locked[name] = time.perf_counter() - started[name]
            time.sleep(0.3)

    def write(planned_write: Any) -> None:
        name = threading.current_thread().name
        barrier.wait(timeout=10)
        started[name] = time.perf_counter()
        try:
            outcomes[name] = store.apply_compaction(planned_write)
        except BaseException as err:  # the test inspects it
            outcomes[name] = err

    threads = [
        threading.Thread(target=write, args=(p.plan,), name=name)
        for name, p in (("a", first), ("b", second))
    ]
    event.listen(engine, "after_cursor_execute", hold)
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
    finally:
        event.remove(engine, "after_cursor_execute", hold)
    assert not any(t.is_alive() for t in threads)
    assert sorted(locked) == ["a", "b"]

    won = {n: o for n, o in outcomes.items() if isinstance(o, AppliedCompaction)}
    lost = {n: o for n, o in outcomes.items() if not isinstance(o, AppliedCompaction)}
    assert len(won) == 1 and len(lost) == 1, outcomes
    ((loser_name, loser),) = lost.items()
    assert isinstance(loser, LockLost), repr(loser)
    assert loser.code == "lock_lost"
    ((winner_name, applied),) = won.items()
    # The loser got the lock only once the winner had committed: it waited, then was refused.
    assert locked[winner_name] < 0.25 <= locked[loser_name], locked
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


# --- a 10,000-message middle --------------------------------------------------------------


def test_ten_thousand_message_middle_is_marked_in_one_statement(
    store: Store, engine: Engine
) -> None:
    messages = conversation(2_500, tool_chars=50)
    session_id = store.create_session()
    ids = store.append_messages(session_id, messages)
    assert len(ids) == len(messages) == 10_001
    config = CompactionConfig(context_window=20_000, summary_input_max_tokens=100_000)
    planned = plan(store, session_id, config)

    with recorded(engine) as statements:
        applied = store.apply_compaction(planned.plan)

    marks = [s for s in statements if s.is_update_of("message", "compacted_at")]
    assert len(marks) == 1, [s.sql for s in marks]
    message_updates = [s for s in statements if s.normalized.startswith("update message ")]
    assert message_updates == marks  # no pruned rows here, and nothing row by row
    assert len(statements) < 20
    assert max(s.parameters for s in statements) <= MAX_PARAMETERS
    assert marks[0].parameters < 20

    assert applied.removed_count == planned.result.removed_count
    assert abs(applied.removed_count - 10_000) <= 200
    compacted = store.load_history(session_id)
    assert len(compacted) == len(ids) - applied.removed_count + 1
    assert messages_of(compacted) == planned.expected_view(applied)


# --- bad input: a clear error with a code, nothing written --------------------------------


def _refused(
    engine: Engine, error: type[CompactionError], code: str, call: Callable[[], object]
) -> None:
    before = snapshot(engine)
    with pytest.raises(error) as err:
        call()
    assert err.value.code == code
    assert snapshot(engine) == before


def test_unknown_session_is_refused(store: Store, engine: Engine) -> None:
    session_id, _ = new_session(store, seed_forty())
    planned = plan(store, session_id)
    ghost = replace(planned.plan, session_id="no-such-session")
    for call in (
        lambda: store.apply_compaction(ghost),
        lambda: store.append_messages("no-such-session", [{"role": "user", "content": "hi"}]),
        lambda: store.record_failed_run("no-such-session", reason="auto", code="x", error="y"),
        lambda: store.append_event("no-such-session", "start", "Compacting"),
    ):
        _refused(engine, SessionNotFound, "session_not_found", call)


@pytest.mark.parametrize("whose", ["other_session", "middle_row", "non_tool_row", "unknown_id"])
def test_pruned_ids_that_are_not_visible_tool_rows_are_refused(
    store: Store, engine: Engine, whose: str
) -> None:
    session_id, ids = new_session(store, pruning_conversation())
    _, other_ids = new_session(store, pruning_conversation())
    planned = plan(store, session_id, PRUNING)
    assert planned.plan.pruned_ids
    middle_tool = next(i for i in planned.result.compressed_ids if i in planned.result.pruned_ids)
    bad = {
        "other_session": other_ids[ids.index(planned.plan.pruned_ids[0])],
        "middle_row": middle_tool,
        "non_tool_row": ids[-1],  # the last assistant answer
        "unknown_id": 10_000_000,
    }[whose]
    write = replace(planned.plan, pruned_ids=[*planned.plan.pruned_ids, bad])
    _refused(engine, InvalidRequest, "invalid_request", lambda: store.apply_compaction(write))
    assert store.get_session(session_id).compaction_version == 0
    store.apply_compaction(planned.plan)


def test_a_range_already_compacted_is_refused(store: Store, engine: Engine) -> None:
    session_id, _ = new_session(store, seed_forty())
    planned, applied = compact_session(store, session_id)
    again = replace(planned.plan, expected_version=applied.version)
    _refused(engine, InvalidRequest, "invalid_request", lambda: store.apply_compaction(again))
    assert store.get_session(session_id).compaction_version == 1


@pytest.mark.parametrize(
    "bad",
    [
        {"role": "robot", "content": "beep"},
        {"role": "user", "content": 5},
        {"role": "user", "content": None},
        {"content": "no role"},
        {"role": "tool", "content": "a result for no call"},
        {"role": "user", "content": "hi", "tool_calls": [{"id": "c", "name": "x"}]},
        "not a message",
    ],
    ids=["robot", "int_content", "none_content", "no_role", "tool_no_id", "user_calls", "str"],
)
def test_bad_messages_are_refused_before_anything_is_written(
    store: Store, engine: Engine, bad: Any
) -> None:
    session_id, _ = new_session(store, conversation(1))
    batch = [{"role": "user", "content": "fine"}, bad]
    _refused(
        engine, InvalidRequest, "invalid_request", lambda: store.append_messages(session_id, batch)
    )
    assert store.get_session(session_id).last_seq == 5


def test_empty_ranges_are_refused(store: Store, engine: Engine) -> None:
    session_id, _ = new_session(store, seed_forty())
    planned = plan(store, session_id).plan
    last = store.get_session(session_id).last_seq
    for write in (
        replace(planned, first_seq=planned.last_seq + 1),  # reversed
        replace(planned, expected_removed=0),
        replace(planned, first_seq=last + 10, last_seq=last + 20),  # beyond the history
        replace(planned, first_seq=1, last_seq=1, expected_removed=2),  # fewer rows than said
    ):
        _refused(
            engine, InvalidRequest, "invalid_request", lambda w=write: store.apply_compaction(w)
        )
    assert store.get_session(session_id).compaction_version == 0


@pytest.mark.parametrize("offset", [1, -1])
def test_a_stale_expected_version_is_lock_lost(store: Store, engine: Engine, offset: int) -> None:
    session_id, _ = new_session(store, seed_forty())
    planned = plan(store, session_id).plan
    stale = replace(planned, expected_version=planned.expected_version + offset)
    _refused(engine, LockLost, "lock_lost", lambda: store.apply_compaction(stale))


# --- failed runs and the run list ---------------------------------------------------------


def test_record_failed_run_changes_no_message(store: Store, engine: Engine) -> None:
    session_id, _ = new_session(store, seed_forty())
    before = snapshot(engine)
    compacted = messages_of(store.load_history(session_id))

    quiet = store.record_failed_run(
        session_id, reason="auto", code="llm_timeout", error="timed out", request_id="r1"
    )
    after = snapshot(engine)
    assert after["message"] == before["message"]
    assert after["chat_session"] == before["chat_session"]

    loud = store.record_failed_run(
        session_id,
        reason="manual",
        code="summary_too_short",
        error="12 characters",
        request_id="r2",
        event_text="Compaction failed",
        event_payload={"requestId": "r2"},
        tokens_before=1234,
        model="aux-model",
        worker="worker-1",
    )
    assert loud > quiet
    final = snapshot(engine)
    assert final["message"][: len(before["message"])] == before["message"]
    (event_row,) = final["message"][len(before["message"]) :]
    full = store.load_history(session_id, "full")
    assert full[-1].id == event_row[0] and full[-1].is_event
    assert full[-1].message.content == "Compaction failed"
    assert full[-1].metadata == {
        "systemType": "compaction_event",
        "event": "failed",
        "runId": loud,
        "code": "summary_too_short",
        "requestId": "r2",
    }
    assert messages_of(store.load_history(session_id)) == compacted
    assert store.get_session(session_id).compaction_version == 0
    assert store.compaction_counts([session_id]) == {}
