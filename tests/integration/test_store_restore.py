"""Undoing compaction runs (store/runs.py ``restore``; docs/architecture.md, "Tests", "Tables"):
the view from before, in order; older plans fenced; a run that only pruned undone, then the run
before it; the "restored" event row, in the same transaction, on the user's screen only.

Every test runs against SQLite and against the real PostgreSQL database (``store`` fixture).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from sqlalchemy import Engine

from compaction import InvalidRequest
from compaction.core.errors import LockLost
from compaction.store import EventRow, FailedRun, RunOrigin, Store
from tests.fakes import conversation
from tests.integration.helpers import (
    PRUNING,
    InjectedFailure,
    compact_session,
    failing,
    messages_of,
    new_session,
    phase_one,
    plan,
    pruning_conversation,
    record_run,
    seed_forty,
    snapshot,
)


def test_restore_gives_back_the_view_before_the_compaction(store: Store) -> None:
    session_id, _ = new_session(store, pruning_conversation())
    before = messages_of(store.load_history(session_id))
    full_before = messages_of(store.load_history(session_id, "full"))
    planned, applied = compact_session(store, session_id, PRUNING, event=EventRow("Compacted"))
    assert applied.pruned_count > 0 and applied.removed_count > 0

    record = store.restore(applied.run_id)
    assert record.id == applied.run_id and record.status == "restored"
    assert record.restored_at is not None
    assert record.summary_message_id == applied.summary_message_id
    assert messages_of(store.load_history(session_id)) == before
    assert store.latest_summary(session_id) is None
    # Nothing deleted: the summary stays in the full view, hidden from the compacted one.
    full = store.load_history(session_id, "full")
    summary = next(s for s in full if s.id == applied.summary_message_id)
    assert summary.compacted_at is not None and summary.is_compaction_summary
    assert (summary.metadata or {}).get("restoredByRunId") == applied.run_id
    originals = [s for s in full if not s.is_compaction_summary and not s.is_event]
    assert messages_of(originals) == full_before
    assert all(s.compacted_at is None and s.pruned_at is None for s in originals)
    assert store.get_session(session_id).compaction_version == 2
    assert [r.status for r in store.runs(session_id)] == ["restored"]
    # It can be compacted again, giving the same view as the first time.
    _, again = compact_session(store, session_id, PRUNING)
    assert messages_of(store.load_history(session_id)) == planned.expected_view(again)


def test_restore_undoes_iterative_compactions_in_order(store: Store, engine: Engine) -> None:
    session_id, _ = new_session(store, seed_forty())
    original = messages_of(store.load_history(session_id))
    _, run1 = compact_session(store, session_id)
    after_run1 = messages_of(store.load_history(session_id))
    added = store.append_messages(session_id, conversation(10, system=False, first_turn=100))
    before_run2 = messages_of(store.load_history(session_id))
    assert before_run2[: len(after_run1)] == after_run1
    appended = before_run2[len(after_run1) :]
    assert [m.id for m in appended] == added
    _, run2 = compact_session(store, session_id)

    # Run 1 cannot be undone while run 2 (which replaced its summary) stands.
    snap = snapshot(engine)
    with pytest.raises(InvalidRequest) as err:
        store.restore(run1.run_id)
    assert err.value.code == "invalid_request"
    assert snapshot(engine) == snap

    store.restore(run2.run_id)
    assert messages_of(store.load_history(session_id)) == before_run2
    latest = store.latest_summary(session_id)
    assert latest is not None and latest.id == run1.summary_message_id

    store.restore(run1.run_id)
    assert messages_of(store.load_history(session_id)) == original + appended
    assert store.latest_summary(session_id) is None
    full = store.load_history(session_id, "full")
    assert all(s.compacted_at is None for s in full if not s.is_compaction_summary)
    assert all(s.compacted_at is not None for s in full if s.is_compaction_summary)
    assert [r.status for r in store.runs(session_id)] == ["restored", "restored"]
    assert store.get_session(session_id).compaction_version == 4


def test_restore_twice_or_a_run_that_did_not_succeed_is_refused(
    store: Store, engine: Engine
) -> None:
    session_id, _ = new_session(store, seed_forty())
    failed = store.record_failed_run(
        FailedRun(origin=RunOrigin(session_id=session_id), code="llm_error", error="boom")
    )
    _, applied = compact_session(store, session_id)
    store.restore(applied.run_id)
    snap = snapshot(engine)
    for run_id in (applied.run_id, failed, 999_999):
        with pytest.raises(InvalidRequest) as err:
            store.restore(run_id)
        assert err.value.code == "invalid_request"
    assert snapshot(engine) == snap


def test_restore_bumps_the_version_so_an_older_plan_is_lock_lost(
    store: Store, engine: Engine
) -> None:
    session_id, _ = new_session(store, seed_forty())
    _, applied = compact_session(store, session_id)
    store.append_messages(session_id, conversation(10, system=False, first_turn=100))
    stale = plan(store, session_id)  # built on version 1
    assert stale.plan.expected_version == 1
    store.restore(applied.run_id)
    assert store.get_session(session_id).compaction_version == 2
    snap = snapshot(engine)
    with pytest.raises(LockLost) as err:
        store.apply_compaction(stale.plan)
    assert err.value.code == "lock_lost"
    assert snapshot(engine) == snap


def test_a_prune_only_run_is_restored_then_the_summarizing_run_before_it(
    store: Store, engine: Engine
) -> None:
    session_id, _ = new_session(store, seed_forty())
    original = messages_of(store.load_history(session_id))
    _, summarized = compact_session(store, session_id)
    appended = conversation(30, tool_chars=3000, system=False, first_turn=100)
    appended_ids = store.append_messages(session_id, appended)
    before_pruning = store.load_history(session_id)
    pruning = phase_one(store, session_id, event=EventRow("Context compacted"))
    pruned = store.apply_compaction(pruning.plan)
    assert (pruned.summary_message_id, pruned.removed_count) == (None, 0)
    assert pruned.pruned_count > 0

    snap = snapshot(engine)
    with pytest.raises(InvalidRequest, match="later compactions"):
        store.restore(summarized.run_id)
    assert snapshot(engine) == snap

    record = store.restore(pruned.run_id)
    assert (record.status, record.summary_message_id) == ("restored", None)
    assert store.load_history(session_id) == before_pruning  # whole again, nothing else moved
    restored = store.load_history(session_id, "display")[-1]
    assert restored.metadata == {
        "systemType": "compaction_event",
        "event": "restored",
        "runId": pruned.run_id,
        "restoredMessages": 0,
        "restoredPruned": pruned.pruned_count,
    }
    assert restored.message.role == "system" and "undone" in restored.message.content
    assert store.get_session(session_id).compaction_version == 3

    store.restore(summarized.run_id)
    appended = [replace(m, id=i) for m, i in zip(appended, appended_ids, strict=True)]
    assert messages_of(store.load_history(session_id)) == original + appended
    assert [r.status for r in store.runs(session_id)] == ["restored", "restored"]
    assert store.compaction_counts([session_id]) == {}
    assert store.get_session(session_id).compaction_version == 4
    with pytest.raises(InvalidRequest, match="nothing to restore"):
        store.restore(pruned.run_id)


def test_a_run_that_changed_no_message_is_nothing_to_restore_and_blocks_nothing(
    store: Store, engine: Engine
) -> None:
    session_id, _ = new_session(store, seed_forty())
    original = messages_of(store.load_history(session_id))
    _, applied = compact_session(store, session_id)
    record_run(store, session_id, 1_000, 900)  # succeeded, but no summary and no pruned row
    unchanged = store.runs(session_id)[-1]
    assert (unchanged.status, unchanged.summary_message_id, unchanged.pruned_count) == (
        "succeeded",
        None,
        0,
    )
    assert store.compaction_counts([session_id]) == {session_id: 1}  # standing ones only
    snap = snapshot(engine)
    with pytest.raises(InvalidRequest, match="changed no message: nothing to restore"):
        store.restore(unchanged.id)
    assert snapshot(engine) == snap
    store.restore(applied.run_id)
    assert messages_of(store.load_history(session_id)) == original
    assert store.compaction_counts([session_id]) == {}


def test_restore_and_its_event_row_are_one_transaction(store: Store, engine: Engine) -> None:
    session_id, _ = new_session(store, pruning_conversation())
    _, applied = compact_session(store, session_id, PRUNING)
    snap = snapshot(engine)
    with (
        failing(engine, lambda s: s.is_insert_into("message")),
        pytest.raises(InjectedFailure),
    ):
        store.restore(applied.run_id)
    assert snapshot(engine) == snap  # nothing un-marked, the run still standing
    store.restore(applied.run_id)
    events = [s for s in store.load_history(session_id, "display") if s.is_event]
    assert [(e.metadata or {}).get("event") for e in events] == ["restored"]
    assert not any(s.is_event for s in store.load_history(session_id))
