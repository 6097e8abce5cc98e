"""Reading and undoing compaction runs (docs/architecture.md, "Tables"): the run records, the UI's
"compacted N times", and ``restore``, which undoes a session's latest standing run in one
transaction."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from compaction.errors import InvalidRequest, SessionNotFound
from store.db import Repository, read_session, write_session
from store.history import require_session
from store.models import ChatSession, CompactionRun, utcnow
from store.models import Message as MessageRow
from store.records import RunRecord


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
    )


class RunLog(Repository):
    """The session's compaction runs: listed, counted, undone."""

    def restore(self, run_id: int) -> RunRecord:
        """Undo a run: its rows visible again, pruned rows whole again, its summary hidden.
        Only a session's latest standing run can be undone (undo later ones first)."""
        now = utcnow()
        with write_session(self.factory) as session:
            run = session.get(CompactionRun, run_id)
            if run is None:
                raise InvalidRequest(f"compaction run {run_id} not found")
            chat = _lock_session(session, run.session_id)
            if run.status != "succeeded" or run.summary_message_id is None:
                raise InvalidRequest(f"run {run_id} is {run.status}: nothing to restore")
            later = session.scalar(
                select(func.count())
                .select_from(CompactionRun)
                .where(
                    CompactionRun.session_id == run.session_id,
                    CompactionRun.id > run.id,
                    CompactionRun.status == "succeeded",
                )
            )
            if later:
                raise InvalidRequest(f"run {run_id} has later compactions: restore those first")
            session.execute(
                update(MessageRow)
                .where(MessageRow.compacted_into_id == run.summary_message_id)
                .values(compacted_at=None, compacted_into_id=None)
            )
            session.execute(
                update(MessageRow)
                .where(MessageRow.pruned_run_id == run.id)
                .values(pruned_at=None, pruned_run_id=None)
            )
            summary = session.get(MessageRow, run.summary_message_id)
            if summary is not None:
                summary.compacted_at = now
                summary.meta = {**(summary.meta or {}), "restoredByRunId": run.id}
            run.status, run.restored_at = "restored", now
            chat.compaction_version += 1  # a worker holding the old version must not write
            session.flush()
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
        """Succeeded compactions per session (the UI's "compacted N times")."""
        with read_session(self.factory) as session:
            rows = session.execute(
                select(CompactionRun.session_id, func.count())
                .where(
                    CompactionRun.session_id.in_(session_ids), CompactionRun.status == "succeeded"
                )
                .group_by(CompactionRun.session_id)
            ).all()
            return {sid: int(n) for sid, n in rows}
