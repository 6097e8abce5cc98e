"""Compaction runs read and undone (store/runs.py; docs/architecture.md, "Tests", "Tables"):
``restore`` gives back the view from before, in order, and fences older plans; the run list; the
last runs' token counts that the anti-loop rule reads.

Every test runs against SQLite and against the real PostgreSQL database (``store`` fixture).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from sqlalchemy import Engine

from compaction import InvalidRequest
from compaction.errors import LockLost
from store import EventRow, FailedRun, RunOrigin, Store
from tests.fakes import FakeSummarizer, conversation
from tests.integration.helpers import (
    PRUNING,
    compact_session,
    failed_run,
    messages_of,
    new_session,
    plan,
    pruning_conversation,
    record_run,
    recorded,
    seed_forty,
    snapshot,
)

# --- restore ----------------------------------------------------------------------------


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


# --- the run list ---------------------------------------------------------------------


def test_runs_lists_every_run_in_order_with_its_fields(store: Store) -> None:
    session_id, _ = new_session(store, seed_forty())
    other, _ = new_session(store, seed_forty())
    failed = store.record_failed_run(
        FailedRun(
            origin=RunOrigin(session_id=session_id, reason="auto", request_id="r1", worker="w1"),
            code="llm_timeout",
            error="timed out",
            tokens_before=999,
            model="aux",
            durations={"summarize": 30.0},
        )
    )
    busy = FailedRun(origin=RunOrigin(session_id=session_id), code="lock_held", error="busy")
    skipped = store.record_failed_run(replace(busy, status="skipped"))
    store.record_failed_run(failed_run(other))
    planned, applied = compact_session(
        store,
        session_id,
        summarizer=FakeSummarizer(usage=(1_000, 200)),
        origin=RunOrigin(session_id=session_id, reason="manual", request_id="r3", worker="w2"),
        model="aux",
    )

    runs = store.runs(session_id)
    assert [r.id for r in runs] == [failed, skipped, applied.run_id]
    assert all(r.session_id == session_id for r in runs)
    first, second, third = runs
    assert (first.status, first.code, first.error, first.reason, first.request_id) == (
        "failed",
        "llm_timeout",
        "timed out",
        "auto",
        "r1",
    )
    assert (first.tokens_before, first.model, first.worker) == (999, "aux", "w1")
    assert first.durations == {"summarize": 30.0}
    assert first.summary_message_id is None and first.removed_count is None
    assert (second.status, second.code, second.reason) == ("skipped", "lock_held", "manual")
    assert third.status == "succeeded" and third.code is None and third.error is None
    assert (third.reason, third.request_id, third.model, third.worker) == (
        "manual",
        "r3",
        "aux",
        "w2",
    )
    assert third.summary_message_id == applied.summary_message_id
    assert third.removed_count == applied.removed_count == planned.result.removed_count
    assert third.pruned_count == applied.pruned_count
    assert third.tokens_before == planned.result.tokens_before
    assert third.tokens_after == planned.result.tokens_after
    assert (third.input_tokens, third.output_tokens) == (1_000, 200)
    assert third.durations and set(third.durations) == set(planned.result.timings)
    assert all(r.finished_at is not None and r.restored_at is None for r in runs)
    assert first.finished_at <= second.finished_at <= third.finished_at

    store.restore(applied.run_id)
    assert store.runs(session_id)[-1].status == "restored"
    assert [r.status for r in store.runs(other)] == ["failed"]
    assert store.compaction_counts([session_id, other]) == {}


# --- what the anti-loop rule reads --------------------------------------------------------


def test_recent_run_tokens_are_the_last_succeeded_measured_runs_oldest_first(
    store: Store, engine: Engine
) -> None:
    session_id, _ = new_session(store, seed_forty())
    other, _ = new_session(store, seed_forty())
    assert store.recent_run_tokens(session_id) == []
    _, undone = compact_session(store, session_id)
    store.restore(undone.run_id)  # restored: no longer counts
    record_run(store, session_id, 1_000, 900)
    failed = FailedRun(origin=RunOrigin(session_id=session_id), code="x", error="y")
    store.record_failed_run(replace(failed, tokens_before=5_000))
    record_run(store, session_id, 2_000, 1_500)
    record_run(store, session_id, None, 1_000)  # not measured
    record_run(store, session_id, 0, 0)
    record_run(store, session_id, 3_000, 0)
    record_run(store, other, 7_000, 6_900)

    with recorded(engine) as statements:
        assert store.recent_run_tokens(session_id) == [(2_000, 1_500), (3_000, 0)]
    (select,) = [s for s in statements if s.normalized.startswith("select")]
    assert " limit " in select.normalized  # the database returns those rows only
    assert store.recent_run_tokens(session_id, limit=3) == [
        (1_000, 900),
        (2_000, 1_500),
        (3_000, 0),
    ]
    assert store.recent_run_tokens(session_id, limit=1) == [(3_000, 0)]
    assert store.recent_run_tokens(other, limit=5) == [(7_000, 6_900)]
    assert store.recent_run_tokens("no-such-session") == []
