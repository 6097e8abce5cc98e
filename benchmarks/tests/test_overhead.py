"""The worker benchmark's accounting (benchmarks/timed_worker.py, benchmarks/overhead.py): the
headline overhead keeps the core and leaves out only the auxiliary model; a two-stage request's
phases add up; what runs after the final event is not counted in the run."""

from __future__ import annotations

import pytest

from benchmarks.overhead import report
from benchmarks.timed_worker import Timers
from compaction.core.engine import CompactionResult


def stage(timers: Timers, phases: dict[str, float]) -> CompactionResult:
    def run() -> CompactionResult:
        with timers.measure("llm"):
            pass
        return CompactionResult([], 0, 0, summarized=True, timings=phases)

    return timers.staged(run)()


def test_two_stages_add_their_phases_and_the_model_is_apart_from_the_core() -> None:
    timers = Timers()
    stage(timers, {"serialize": 0.010, "ledger": 0.004})
    stage(timers, {"serialize": 0.002})
    assert timers.seconds["stages"] == 2
    assert timers.seconds["phase.serialize"] == pytest.approx(0.012)
    assert timers.seconds["phase.ledger"] == pytest.approx(0.004)
    assert timers.seconds["llm"] > 0 and timers.seconds["core"] > 0


def test_what_runs_after_the_final_event_is_counted_apart() -> None:
    timers = Timers()
    with timers.measure("write"):
        pass
    timers.done = True
    with timers.measure("store", "store.compaction_counts"):
        pass
    assert set(timers.seconds) == {"write", "after_done"}


def test_the_headline_keeps_the_core_and_the_old_figure_leaves_it_out(
    capsys: pytest.CaptureFixture[str],
) -> None:
    record = {
        "total": 0.060,
        "hop": 0.003,
        "llm": 0.010,
        "core": 0.020,
        "floor": 0.010,
        "floor_rows": 288,
        "floor_wide": 0.025,
    }
    report([record])
    out = capsys.readouterr().out
    assert "overhead (end to end - auxiliary model)          50.0 ms" in out
    assert "UPDATE of the 288 rows the job compacted" in out
    assert "ratio  5.00 (goal <= 2" in out
    assert (
        "step 11's floor (the UPDATE's range: all but 3 rows at each end)  25.0 ms; ratio  2.00"
        in out
    )
    assert "old figure (end to end - auxiliary model - core)   30.0 ms; ratio  3.00" in out


def test_statements_are_labelled_by_kind_table_and_first_target() -> None:
    from benchmarks.timed_worker import statement_label

    assert statement_label("UPDATE message SET compacted_at=%(b_now)s WHERE x") == (
        "UPDATE message SET compacted_at"
    )
    assert statement_label("UPDATE message SET pruned_at=%(a)s, pruned_run_id=%(b)s") == (
        "UPDATE message SET pruned_at"
    )
    summary = "INSERT INTO message (session_id, seq, content) VALUES (%(a)s, %(b)s, %(c)s)"
    event = "INSERT INTO message (session_id, seq, metadata) VALUES (%(a)s, %(b)s, %(c)s)"
    assert statement_label(summary) == "INSERT INTO message (summary)"
    assert statement_label(event) == "INSERT INTO message (event)"
    assert statement_label("SELECT message.id, message.role FROM message") == (
        "SELECT message.id, message.role FROM"
    )


def test_the_statements_line_lists_each_statement_when_timed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    record = {"total": 0.05, "hop": 0.003, "floor": 0.01, "floor_rows": 288, "floor_wide": 0.0}
    report([record])
    assert "SQL by statement" not in capsys.readouterr().out
    report([{**record, "sql.UPDATE message SET compacted_at": 0.012}])
    assert "SQL by statement (median ms): UPDATE message SET compacted_at 12.00" in (
        capsys.readouterr().out
    )
