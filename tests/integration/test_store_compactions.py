"""Compaction write-back (docs/architecture.md, "Tables", "Error codes"): what one write leaves,
with a summary (the middle marked by range) or for phase 1 alone; bad input refused with a code;
failed runs. All or nothing is test_store_atomicity.py; restoring is test_store_runs.py.

Every test runs against SQLite and against the real PostgreSQL database (``store`` and
``engine`` fixtures share one engine, so listeners on ``engine`` see the store's statements).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

import pytest
from sqlalchemy import Engine, text

from compaction import CompactionConfig, InvalidRequest
from compaction.core.errors import CompactionError, LockLost, SessionNotFound
from compaction.store import EventRow, FailedRun, RunOrigin, Store
from tests.fakes import conversation
from tests.integration.helpers import (
    MAX_PARAMETERS,
    PRUNING,
    compact_session,
    failed_run,
    messages_of,
    new_session,
    phase_one,
    plan,
    pruning_conversation,
    recorded,
    seed_forty,
    snapshot,
)

# --- phase 1 alone -----------------------------------------------------------------------


def test_phase_one_alone_marks_the_pruned_rows_records_the_run_and_the_done_row(
    store: Store,
) -> None:
    session_id, _ = new_session(store, pruning_conversation())
    planned = phase_one(store, session_id, EventRow("Context compacted", {"requestId": "r1"}))
    assert planned.plan.summary is None

    applied = store.apply_compaction(planned.plan)

    assert (applied.summary_message_id, applied.removed_count, applied.version) == (None, 0, 1)
    assert applied.pruned_count == len(planned.result.pruned_ids) > 0
    assert messages_of(store.load_history(session_id)) == planned.expected_view(applied)
    full = store.load_history(session_id, "full")
    assert not any(s.compacted_at or s.is_compaction_summary for s in full)
    pruned = {s.id for s in full if s.pruned_at is not None}
    assert pruned == set(planned.result.pruned_ids)
    (done,) = [s for s in full if s.is_event]
    assert done.message.content == "Context compacted"
    assert done.metadata == {
        "systemType": "compaction_event",
        "event": "done",
        "runId": applied.run_id,
        "requestId": "r1",
    }
    (run,) = store.runs(session_id)
    assert (run.id, run.status, run.reason, run.removed_count, run.pruned_count) == (
        applied.run_id,
        "succeeded",
        "auto",
        0,
        applied.pruned_count,
    )
    assert (run.summary_message_id, run.model, run.input_tokens, run.output_tokens) == (
        None,
        None,
        None,
        None,
    )
    assert (run.tokens_before, run.tokens_after) == (
        planned.result.tokens_before,
        planned.result.tokens_after,
    )
    assert store.get_session(session_id).compaction_version == 1


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


def test_the_fence_inserts_the_summary_in_its_statement_on_postgresql(
    store: Store, engine: Engine
) -> None:
    """One round trip for the fence and the summary on PostgreSQL (``store/fence.py``), two on
    SQLite; the summary row is the same either way."""
    session_id, _ = new_session(store, seed_forty())
    planned = plan(store, session_id)

    with recorded(engine) as statements:
        applied = store.apply_compaction(planned.plan)

    fences = [s for s in statements if s.is_update_of("chat_session", "compaction_version")]
    inserts = [s for s in statements if s.is_insert_into("message")]
    assert len(fences) == len(inserts) == 1
    assert (fences == inserts) == (engine.dialect.name == "postgresql")
    (summary,) = [s for s in store.load_history(session_id) if s.is_compaction_summary]
    assert summary.id == applied.summary_message_id
    assert summary.seq_minor == applied.version == 1
    assert summary.message.content == planned.result.summary_text
    assert not summary.message.pinned and summary.message.role == "user"


def test_unknown_session_is_refused(store: Store, engine: Engine) -> None:
    session_id, _ = new_session(store, seed_forty())
    planned = plan(store, session_id)
    ghost = replace(planned.plan, origin=RunOrigin(session_id="no-such-session"))
    for call in (
        lambda: store.apply_compaction(ghost),
        lambda: store.append_messages("no-such-session", [{"role": "user", "content": "hi"}]),
        lambda: store.record_failed_run(failed_run("no-such-session")),
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
        {"content": "no role"},
        {"role": "tool", "content": "a result for no call"},
        {"role": "user", "content": "hi", "tool_calls": [{"id": "c", "name": "x"}]},
        "not a message",
    ],
    ids=["robot", "int_content", "no_role", "tool_no_id", "user_calls", "str"],
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
    write = plan(store, session_id).plan
    summary = write.summary
    assert summary is not None
    last = store.get_session(session_id).last_seq
    for bad in (
        replace(summary, first_seq=summary.last_seq + 1),  # reversed
        replace(summary, expected_removed=0),
        replace(summary, first_seq=last + 10, last_seq=last + 20),  # beyond the history
        replace(summary, first_seq=1, last_seq=1, expected_removed=2),  # fewer rows than said
    ):
        apply = partial(store.apply_compaction, replace(write, summary=bad))
        _refused(engine, InvalidRequest, "invalid_request", apply)
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
        FailedRun(
            origin=RunOrigin(session_id=session_id, reason="auto", request_id="r1"),
            code="llm_timeout",
            error="timed out",
        )
    )
    after = snapshot(engine)
    assert after["message"] == before["message"]
    assert after["chat_session"] == before["chat_session"]

    loud = store.record_failed_run(
        FailedRun(
            origin=RunOrigin(session_id=session_id, request_id="r2", worker="worker-1"),
            code="summary_too_short",
            error="12 characters",
            tokens_before=1234,
            model="aux-model",
            event=EventRow("Compaction failed", {"requestId": "r2"}),
        )
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


def test_an_event_row_alone_takes_the_next_seq_and_its_columns(
    store: Store, engine: Engine
) -> None:
    """``append_event`` (one statement on PostgreSQL, a transaction on SQLite): the row takes
    the seq after the session's last, holds the event's text and payload, and moves the
    session's ``last_seq`` on (nothing else of the session row), so that the next append comes
    after it."""
    session_id, _ = new_session(store, conversation(2))
    last = store.get_session(session_id).last_seq
    session_row = text("SELECT id, created_at, compaction_version FROM chat_session WHERE id = :s")
    with engine.connect() as conn:
        before = conn.execute(session_row, {"s": session_id}).one()
    row_id = store.append_event(session_id, "start", "Compacting…", {"requestId": "r1"})
    assert store.get_session(session_id).last_seq == last + 1
    later = store.append_messages(session_id, [{"role": "user", "content": "next"}])
    full = {s.id: s for s in store.load_history(session_id, "full")}
    row = full[row_id]
    assert (row.seq, row.seq_minor, row.message.role) == (last + 1, 0, "system")
    assert row.message.content == "Compacting…"
    assert row.metadata == {"systemType": "compaction_event", "event": "start", "requestId": "r1"}
    assert row.created_at is not None and row.is_event and not row.is_compaction_summary
    assert full[later[0]].seq == last + 2
    with engine.connect() as conn:
        assert conn.execute(session_row, {"s": session_id}).one() == before
