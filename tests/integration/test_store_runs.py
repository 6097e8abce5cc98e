"""Compaction runs read (store/runs.py; docs/architecture.md, "Tables"): the run list; the last
runs' token counts that the anti-loop rule reads. Restore is test_store_restore.py.

Every test runs against SQLite and against the real PostgreSQL database (``store`` fixture).
"""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy import Engine

from compaction.store import FailedRun, RunOrigin, Store
from tests.fakes import FakeSummarizer
from tests.integration.helpers import (
    compact_session,
    failed_run,
    new_session,
    record_run,
    recorded,
    seed_forty,
)

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
