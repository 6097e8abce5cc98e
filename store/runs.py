"""Reading and undoing compaction runs (docs/architecture.md, "Tables"): the run records, the UI's
"compacted N times", and ``restore``, which undoes a session's latest standing run (a summary, or
pruning alone) in one transaction and leaves a "restored" event row for the user's screen."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import ColumnElement, and_, func, or_, select, update
from sqlalchemy.orm import Session

from compaction.core.errors import InvalidRequest, NotFound, SessionNotFound
from compaction.core.event_text import event_text
from compaction.store.db import Repository, read_session, write_session
from compaction.store.event_rows import event_row
from compaction.store.history import require_session
from compaction.store.models import ChatSession, CompactionRun, utcnow
from compaction.store.models import Message as MessageRow
from compaction.store.records import RunRecord


def _lock_session(session: Session, session_id: str) -> ChatSession:
    row = session.scalar(select(ChatSession).where(ChatSession.id == session_id).with_for_update())
    if row is None:
        raise SessionNotFound(f"session {session_id!r} not found")
    return row


def _record(row: CompactionRun) -> RunRecord:
    return RunRecord(
        id=row.id,
        session_id=row.session_id,
        request_id=row.request_id,
        reason=row.reason,
        status=row.status,
        code=row.code,
        error=row.error,
        tokens_before=row.tokens_before,
        tokens_after=row.tokens_after,
        removed_count=row.removed_count,
        pruned_count=row.pruned_count,
        summary_message_id=row.summary_message_id,
        model=row.model,
        input_tokens=row.input_tokens,
        output_tokens=row.output_tokens,
        durations=row.durations,
        worker=row.worker,
        finished_at=row.finished_at,
        restored_at=row.restored_at,
        receipt=row.receipt,
        cost=row.cost,
    )


def _standing() -> ColumnElement[bool]:
    """Runs that ``restore`` may undo: succeeded (not restored yet) and changed the history, by
    a summary or by pruning alone. The latest of them is the one to undo next."""
    return and_(
        CompactionRun.status == "succeeded",
        or_(CompactionRun.summary_message_id.is_not(None), CompactionRun.pruned_count > 0),
    )


def _undo(session: Session, run: CompactionRun) -> None:
    """The rows ``run`` compacted visible again, the rows it pruned whole again, its summary
    hidden, the run ``restored``, and the event row saying so (never in the model's view)."""
    now, conn = utcnow(), session.connection()
    restored = 0
    if run.summary_message_id is not None:
        restored = conn.execute(
            update(MessageRow)
            .where(MessageRow.compacted_into_id == run.summary_message_id)
            .values(compacted_at=None, compacted_into_id=None)
        ).rowcount
        summary = session.get(MessageRow, run.summary_message_id)
        if summary is not None:
            summary.compacted_at = now
            summary.meta = {**(summary.meta or {}), "restoredByRunId": run.id}
    pruned = conn.execute(
        update(MessageRow)
        .where(MessageRow.pruned_run_id == run.id)
        .values(pruned_at=None, pruned_run_id=None)
    ).rowcount
    run.status, run.restored_at = "restored", now
    payload = {"runId": run.id, "restoredMessages": restored, "restoredPruned": pruned}
    # in the language of the run it undoes
    text = event_text("restored", payload, run.language)
    event_row(conn, run.session_id, "restored", text, payload)


class RunLog(Repository):
    """The session's compaction runs: listed, counted, undone."""

    def restore(self, run_id: int) -> RunRecord:
        """Undo a run: its rows visible again, pruned rows whole again, its summary hidden, a
        "restored" event row for the user's screen, the version bumped, in one transaction.
        Only a session's latest standing run that changed the history can be undone (undo
        later ones first); a run that only pruned is one."""
        with write_session(self.factory) as session:
            run = session.get(CompactionRun, run_id)
            if run is None:
                raise NotFound(f"compaction run {run_id} not found")
            chat = _lock_session(session, run.session_id)
            latest = session.scalar(
                select(func.max(CompactionRun.id)).where(
                    CompactionRun.session_id == run.session_id, _standing()
                )
            )
            if latest is None or latest < run.id:  # not standing, or changed no message
                what = "changed no message" if run.status == "succeeded" else f"is {run.status}"
                raise InvalidRequest(f"run {run_id} {what}: nothing to restore")
            if latest > run.id:
                raise InvalidRequest(f"run {run_id} has later compactions: restore those first")
            _undo(session, run)
            chat.compaction_version += 1  # a worker holding the old version must not write
            session.flush()
            return _record(run)

    def get_run(self, run_id: int) -> RunRecord:
        with read_session(self.factory) as session:
            run = session.get(CompactionRun, run_id)
            if run is None:
                raise NotFound(f"compaction run {run_id} not found")
            return _record(run)

    def runs(self, session_id: str) -> list[RunRecord]:
        with read_session(self.factory) as session:
            require_session(session, session_id)
            rows = session.scalars(
                select(CompactionRun)
                .where(CompactionRun.session_id == session_id)
                .order_by(CompactionRun.id)
            )
            return [_record(r) for r in rows]

    def recent_run_tokens(self, session_id: str, limit: int = 2) -> list[tuple[int, int]]:
        """``(tokens_before, tokens_after)`` of the session's last ``limit`` succeeded runs
        that measured both, oldest first: what the anti-loop rule reads before every auto
        request, so the database returns those rows only. An unknown session has none."""
        query = (
            select(CompactionRun.tokens_before, CompactionRun.tokens_after)
            .where(
                CompactionRun.session_id == session_id,
                CompactionRun.status == "succeeded",
                CompactionRun.tokens_before > 0,
                CompactionRun.tokens_after.is_not(None),
            )
            .order_by(CompactionRun.id.desc())
            .limit(limit)
        )
        with read_session(self.factory) as session:
            rows = session.execute(query).all()
        # Both are non-null by the WHERE clause; ``or 0`` only tells the type checker so.
        return [(before or 0, after or 0) for before, after in reversed(rows)]

    def compaction_counts(self, session_ids: Sequence[str]) -> dict[str, int]:
        """Standing compactions per session (the UI's "compacted N times"): the runs that
        changed the history and are not restored, those ``restore`` may undo."""
        with read_session(self.factory) as session:
            rows = session.execute(
                select(CompactionRun.session_id, func.count())
                .where(CompactionRun.session_id.in_(session_ids), _standing())
                .group_by(CompactionRun.session_id)
            ).all()
            return {sid: int(n) for sid, n in rows}
