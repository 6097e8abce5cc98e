"""Writing compactions back (DESIGN §5, §7): one short transaction each, fenced by the
session's ``compaction_version``; failed runs; the UI's event rows. Reading and restoring runs
is ``store.runs``."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, bindparam, insert, select, update

from compaction.engine import CompactionResult
from compaction.errors import InvalidRequest, LockLost, SessionNotFound
from store.db import Repository, write_session
from store.history import not_event
from store.models import Base, ChatSession, utcnow
from store.models import Message as MessageRow
from store.records import (
    EVENT_TYPE,
    AppliedCompaction,
    CompactionWrite,
    StoredMessage,
)
from store.sessions import reserve_seqs

#: Ids per ``IN (...)`` list: well under the 65,535 parameters a PostgreSQL statement may hold.
ID_CHUNK = 1_000


# One UPDATE locks the session row, checks the version, bumps it and reserves ``seq`` values
# (a concurrent writer waits on the lock, then finds the version moved).
_FENCE = (
    update(ChatSession)
    .where(
        ChatSession.id == bindparam("b_session"),
        ChatSession.compaction_version == bindparam("b_expected"),
    )
    .values(
        compaction_version=ChatSession.compaction_version + 1,
        last_seq=ChatSession.last_seq + bindparam("b_seqs"),
    )
    .returning(ChatSession.compaction_version, ChatSession.last_seq)
)


def _fence(conn: Connection, session_id: str, expected_version: int, seqs: int) -> tuple[int, int]:
    """Bump the session's version if it is still ``expected_version`` and reserve ``seqs``
    ``seq`` values. Returns the new version and the first reserved ``seq``."""
    row = conn.execute(
        _FENCE, {"b_session": session_id, "b_expected": expected_version, "b_seqs": seqs}
    ).one_or_none()
    if row is None:
        current = conn.scalar(
            select(ChatSession.compaction_version).where(ChatSession.id == session_id)
        )
        if current is None:
            raise SessionNotFound(f"session {session_id!r} not found")
        raise LockLost(
            f"session {session_id!r} is at compaction version {current}, not "
            f"{expected_version}: another run won; nothing written"
        )
    version, last_seq = row
    return int(version), int(last_seq) - seqs + 1


# The middle, marked by its seq range in one statement (no id lists: a 10,000-message middle
# would pass psycopg's 65,535 parameters).
_MARK_RANGE = (
    update(MessageRow)
    .where(
        MessageRow.session_id == bindparam("b_session"),
        MessageRow.seq.between(bindparam("b_first"), bindparam("b_last")),
        MessageRow.compacted_at.is_(None),
        MessageRow.id != bindparam("b_summary"),
        not_event(),
    )
    .values(compacted_at=bindparam("b_now"), compacted_into_id=bindparam("b_summary"))
)


# Core, not the unit of work: these rows are written once and never loaded as objects. The
# statements are built once and the values bound at execution (columns by their table names:
# ``metadata``, not the model's ``meta``); building them per row cost more than sending them.
_MESSAGES = Base.metadata.tables["message"]
_RUNS = Base.metadata.tables["compaction_run"]
_INSERT_MESSAGE = insert(_MESSAGES).returning(_MESSAGES.c.id)
_INSERT_RUN = insert(_RUNS).returning(_RUNS.c.id)


def _insert_message(conn: Connection, **values: Any) -> int:
    return int(conn.execute(_INSERT_MESSAGE, values).scalar_one())


def _insert_run(conn: Connection, **values: Any) -> int:
    return int(conn.execute(_INSERT_RUN, values).scalar_one())


def _event_row(
    conn: Connection,
    session_id: str,
    event: str,
    text: str,
    payload: dict[str, Any],
    seq: int | None = None,
) -> int:
    """A compaction-event row; ``seq`` when one was reserved already."""
    return _insert_message(
        conn,
        session_id=session_id,
        seq=reserve_seqs(conn, session_id, 1) if seq is None else seq,
        seq_minor=0,
        role="system",
        content=text,
        metadata={"systemType": EVENT_TYPE, "event": event, **payload},
    )


def _mark_pruned(
    conn: Connection,
    session_id: str,
    pruned_ids: Sequence[int],
    run_id: int,
    now: datetime,
    after_seq: int = 0,
) -> int:
    """Mark kept tool rows pruned; only rows after ``after_seq`` (the tail) qualify."""
    ids = list(dict.fromkeys(pruned_ids))
    marked = 0
    for start in range(0, len(ids), ID_CHUNK):
        result = conn.execute(
            update(MessageRow)
            .where(
                MessageRow.session_id == session_id,
                MessageRow.id.in_(ids[start : start + ID_CHUNK]),
                MessageRow.role == "tool",
                MessageRow.compacted_at.is_(None),
                MessageRow.pruned_at.is_(None),
                MessageRow.seq > after_seq,
            )
            .values(pruned_at=now, pruned_run_id=run_id)
        )
        marked += result.rowcount
    if marked != len(ids):
        raise InvalidRequest(
            f"{len(ids) - marked} of the pruned ids are not visible tool rows in the tail "
            f"of session {session_id!r}"
        )
    return marked


class Compactions(Repository):
    def apply_compaction(self, plan: CompactionWrite) -> AppliedCompaction:
        """Insert the summary, mark the middle by ``seq`` range and the pruned rows, record the
        run and bump the version, all or nothing. A stale ``expected_version`` is ``lock_lost``;
        a range that is not what the core compacted is ``invalid_request``."""
        if plan.first_seq > plan.last_seq or plan.expected_removed < 1:
            raise InvalidRequest("an empty range: nothing to compact")
        now = utcnow()
        event_seqs = 1 if plan.event_text else 0
        with write_session(self.factory) as session:
            conn = session.connection()
            version, event_seq = _fence(conn, plan.session_id, plan.expected_version, event_seqs)
            summary_id = _insert_message(
                conn,
                session_id=plan.session_id,
                seq=plan.last_seq,
                seq_minor=version,
                role="user",
                content=plan.summary,
                is_compaction_summary=True,
            )
            removed = conn.execute(
                _MARK_RANGE,
                {
                    "b_session": plan.session_id,
                    "b_first": plan.first_seq,
                    "b_last": plan.last_seq,
                    "b_summary": summary_id,
                    "b_now": now,
                },
            ).rowcount
            if removed != plan.expected_removed:
                raise InvalidRequest(
                    f"seq {plan.first_seq}..{plan.last_seq} holds {removed} visible rows, not "
                    f"the {plan.expected_removed} that were compacted (already compacted?)"
                )
            run_id = _insert_run(
                conn,
                session_id=plan.session_id,
                request_id=plan.request_id,
                reason=plan.reason,
                status="succeeded",
                language=plan.language,
                tokens_before=plan.tokens_before,
                tokens_after=plan.tokens_after,
                removed_count=removed,
                pruned_count=len(set(plan.pruned_ids)),
                summary_message_id=summary_id,
                compaction_version=version,
                model=plan.model,
                input_tokens=plan.input_tokens,
                output_tokens=plan.output_tokens,
                durations=plan.durations or None,
                worker=plan.worker,
                started_at=plan.started_at,
                finished_at=now,
            )
            pruned = _mark_pruned(
                conn, plan.session_id, plan.pruned_ids, run_id, now, after_seq=plan.last_seq
            )
            if plan.event_text:
                _event_row(
                    conn,
                    plan.session_id,
                    "done",
                    plan.event_text,
                    {"runId": run_id, "summaryMessageId": summary_id, **plan.event_payload},
                    seq=event_seq,
                )
            return AppliedCompaction(run_id, summary_id, removed, pruned, version)

    def apply_pruning(
        self,
        session_id: str,
        *,
        expected_version: int,
        pruned_ids: Sequence[int],
        reason: str = "auto",
        request_id: str | None = None,
        language: str = "en",
        tokens_before: int | None = None,
        tokens_after: int | None = None,
        worker: str | None = None,
        event_text: str | None = None,
        event_payload: dict[str, Any] | None = None,
    ) -> AppliedCompaction:
        """Phase 1 alone (an auto request that pruning brought under the threshold): the pruned
        rows, the run and the version bump, in one transaction; no summary."""
        now = utcnow()
        with write_session(self.factory) as session:
            conn = session.connection()
            version, event_seq = _fence(conn, session_id, expected_version, 1 if event_text else 0)
            run_id = _insert_run(
                conn,
                session_id=session_id,
                request_id=request_id,
                reason=reason,
                status="succeeded",
                language=language,
                tokens_before=tokens_before,
                tokens_after=tokens_after,
                removed_count=0,
                pruned_count=len(set(pruned_ids)),
                compaction_version=version,
                worker=worker,
                finished_at=now,
            )
            pruned = _mark_pruned(conn, session_id, pruned_ids, run_id, now)
            if event_text:
                _event_row(
                    conn,
                    session_id,
                    "done",
                    event_text,
                    {"runId": run_id, **(event_payload or {})},
                    seq=event_seq,
                )
            return AppliedCompaction(run_id, 0, 0, pruned, version)

    def record_failed_run(
        self,
        session_id: str,
        *,
        reason: str,
        code: str,
        error: str,
        request_id: str | None = None,
        status: str = "failed",
        event_text: str | None = None,
        event_payload: dict[str, Any] | None = None,
        **fields: Any,
    ) -> int:
        """A failed (or skipped) run: the history is untouched; the run and, optionally, the
        failed event row are recorded."""
        with write_session(self.factory) as session:
            if session.get(ChatSession, session_id) is None:
                raise SessionNotFound(f"session {session_id!r} not found")
            conn = session.connection()
            run_id = _insert_run(
                conn,
                session_id=session_id,
                request_id=request_id,
                reason=reason,
                status=status,
                code=code,
                error=error,
                **fields,
            )
            if event_text:
                _event_row(
                    conn,
                    session_id,
                    "failed",
                    event_text,
                    {"runId": run_id, "code": code, **(event_payload or {})},
                )
            return run_id

    def append_event(
        self, session_id: str, event: str, text: str, payload: dict[str, Any] | None = None
    ) -> int:
        """A compaction-event row (``role=system``, ``metadata.systemType``), seed §8.3."""
        with write_session(self.factory) as session:
            return _event_row(session.connection(), session_id, event, text, payload or {})


def plan_compaction(
    view: Sequence[StoredMessage],
    result: CompactionResult,
    *,
    session_id: str,
    expected_version: int,
    **fields: Any,
) -> CompactionWrite:
    """The write for a core ``CompactionResult`` computed on ``view`` (the compacted history as
    loaded): the middle's ``seq`` range and count, and the pruned rows that stay visible."""
    start, end = result.middle
    kept_ids = {stored.id for stored in view[end:]}
    return CompactionWrite(
        session_id=session_id,
        expected_version=expected_version,
        first_seq=view[start].seq,
        last_seq=view[end - 1].seq,
        expected_removed=end - start,
        summary=result.summary_text,
        pruned_ids=[i for i in result.pruned_ids if i in kept_ids],
        language=result.language,
        tokens_before=result.tokens_before,
        tokens_after=result.tokens_after,
        input_tokens=result.input_tokens,
        output_tokens=result.output_tokens,
        durations=dict(result.timings),
        **fields,
    )
