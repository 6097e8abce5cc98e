"""Writing compactions back (docs/architecture.md, "Tables", "Error codes"): one short transaction
each, fenced by the session's ``compaction_version``; failed runs; the UI's event rows. Reading and
restoring runs is ``store.runs``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, bindparam, insert, select, update

from compaction.core.errors import InvalidRequest, SessionNotFound
from compaction.store.db import Repository, read_connection, write_session
from compaction.store.event_rows import event_row, event_row_alone, event_values
from compaction.store.fence import fence, insert_summary, summary_values
from compaction.store.history import not_event
from compaction.store.models import Base, ChatSession, utcnow
from compaction.store.models import Message as MessageRow
from compaction.store.records import (
    AppliedCompaction,
    CompactionWrite,
    FailedRun,
    RunOrigin,
    SummaryWrite,
)

#: a step of the write's own transaction, after it (``Compactions.apply_compaction``)
Then = Callable[[Connection, AppliedCompaction], None]

#: Ids per ``IN (...)`` list: well under the 65,535 parameters a PostgreSQL statement may hold.
ID_CHUNK = 1_000


# The middle, marked by its seq range in one statement (no id lists: a 10,000-message middle
# would pass psycopg's 65,535 parameters).
_MARK_RANGE = (
    update(MessageRow)
    .where(
        MessageRow.session_id == bindparam("b_session"),
        MessageRow.seq.between(bindparam("b_first"), bindparam("b_last")),
        MessageRow.compacted_at.is_(None),
        MessageRow.id != bindparam("b_summary"),
        MessageRow.id.not_in(bindparam("b_kept", expanding=True)),
        MessageRow.pinned.is_(False),  # docs/architecture.md, "Pins"
        not_event(),
    )
    .values(compacted_at=bindparam("b_now"), compacted_into_id=bindparam("b_summary"))
)
# Pinned rows of the range the core did not keep: a pin set after the run read the history.
_PINNED_IN_RANGE = select(MessageRow.id).where(
    MessageRow.session_id == bindparam("b_session"),
    MessageRow.seq.between(bindparam("b_first"), bindparam("b_last")),
    MessageRow.compacted_at.is_(None),
    MessageRow.pinned,
    MessageRow.id.not_in(bindparam("b_kept", expanding=True)),
)


# Core, not the unit of work: these rows are written once and never loaded as objects. The
# statements are built once and the values bound at execution (columns by their table names:
# ``metadata``, not the model's ``meta``); building them per row cost more than sending them.
_RUNS = Base.metadata.tables["compaction_run"]
_INSERT_RUN = insert(_RUNS).returning(_RUNS.c.id)


def _insert_run(conn: Connection, origin: RunOrigin, values: dict[str, Any]) -> int:
    """A run row: who asked and who ran it, and what it did (``values``, by column)."""
    row = {
        "session_id": origin.session_id,
        "request_id": origin.request_id,
        "reason": origin.reason,
        "worker": origin.worker,
        "started_at": origin.started_at,
        **values,
    }
    return int(conn.execute(_INSERT_RUN, row).scalar_one())


def _replace_middle(
    conn: Connection, session_id: str, summary: SummaryWrite, summary_id: int, now: datetime
) -> int:
    """Mark the middle the summary ``summary_id`` replaces but the rows the core kept; returns
    the rows marked. A pinned row is never marked (docs/architecture.md, "Pins"): one the core
    did not keep refuses the write. The pins are looked for only when the count is off (a
    pinned row is left unmarked, so it always is): one round trip less."""
    bounds = {"b_session": session_id, "b_first": summary.first_seq, "b_last": summary.last_seq}
    kept = {"b_kept": list(summary.kept_ids)}
    removed = conn.execute(
        _MARK_RANGE, {**bounds, **kept, "b_summary": summary_id, "b_now": now}
    ).rowcount
    if removed != summary.expected_removed:
        pinned = conn.scalars(_PINNED_IN_RANGE, {**bounds, **kept}).first()
        if pinned is not None:
            raise InvalidRequest(f"message {pinned} is pinned: it cannot be compacted")
        raise InvalidRequest(
            f"seq {summary.first_seq}..{summary.last_seq} holds {removed} visible rows, not "
            f"the {summary.expected_removed} that were compacted (already compacted?)"
        )
    return removed


# Kept tool rows of the tail marked pruned, built once like the statements above (a statement
# built per call costs its construction and its cache key on every write).
_MARK_PRUNED = (
    update(MessageRow)
    .where(
        MessageRow.session_id == bindparam("b_session"),
        MessageRow.id.in_(bindparam("b_ids", expanding=True)),
        MessageRow.role == "tool",
        MessageRow.compacted_at.is_(None),
        MessageRow.pruned_at.is_(None),
        MessageRow.pinned.is_(False),  # docs/architecture.md, "Pins"
        MessageRow.seq > bindparam("b_after"),
    )
    .values(pruned_at=bindparam("b_now"), pruned_run_id=bindparam("b_run"))
)


def _mark_pruned(
    conn: Connection,
    session_id: str,
    pruned_ids: Sequence[int],
    run_id: int,
    now: datetime,
    after_seq: int,
) -> int:
    """Mark kept tool rows pruned; only rows after ``after_seq`` (the tail) qualify."""
    ids = list(dict.fromkeys(pruned_ids))
    marked = 0
    params = {"b_session": session_id, "b_after": after_seq, "b_now": now, "b_run": run_id}
    for start in range(0, len(ids), ID_CHUNK):
        marked += conn.execute(
            _MARK_PRUNED, {**params, "b_ids": ids[start : start + ID_CHUNK]}
        ).rowcount
    if marked != len(ids):
        raise InvalidRequest(
            f"{len(ids) - marked} of the pruned ids are not visible unpinned tool rows in the "
            f"tail of session {session_id!r}"
        )
    return marked


class Compactions(Repository):
    def apply_compaction(
        self, write: CompactionWrite, then: Then | None = None
    ) -> AppliedCompaction:
        """Insert the summary and mark the middle by ``seq`` range (when there is a summary),
        mark the pruned rows, record the run and bump the version, all or nothing. A stale
        ``expected_version`` is ``lock_lost``; a range that is not what the core compacted is
        ``invalid_request``. ``then`` runs last in the same transaction (a review's draft
        closes there: ``store.drafts``); what it raises undoes the write."""
        session_id, summary = write.origin.session_id, write.summary
        if summary and (summary.first_seq > summary.last_seq or summary.expected_removed < 1):
            raise InvalidRequest("an empty range: nothing to compact")
        now = utcnow()
        with write_session(self.factory) as session:
            conn = session.connection()
            values = summary_values(session_id, summary, now) if summary else None
            one_statement = values is not None and conn.dialect.name == "postgresql"
            version, event_seq, summary_id = fence(
                conn,
                session_id,
                write.expected_version,
                1 if write.event else 0,
                values if one_statement else None,
            )
            removed = 0
            if summary and values:
                if summary_id is None:
                    summary_id = insert_summary(conn, values, version)
                removed = _replace_middle(conn, session_id, summary, summary_id, now)
            run_id = _insert_run(
                conn,
                write.origin,
                {
                    "status": "succeeded",
                    "language": write.language,
                    "tokens_before": write.tokens_before,
                    "tokens_after": write.tokens_after,
                    "removed_count": removed,
                    "pruned_count": len(set(write.pruned_ids)),
                    "summary_message_id": summary_id,
                    "compaction_version": version,
                    "model": write.model,
                    "input_tokens": write.input_tokens,
                    "output_tokens": write.output_tokens,
                    "durations": write.durations or None,
                    "receipt": write.receipt,
                    "cost": write.cost,
                    "finished_at": now,
                },
            )
            after_seq = summary.last_seq if summary else 0
            pruned = _mark_pruned(conn, session_id, write.pruned_ids, run_id, now, after_seq)
            if write.event:
                summary_ref = {"summaryMessageId": summary_id} if summary else {}
                payload = {"runId": run_id, **summary_ref, **write.event.payload}
                event_row(conn, session_id, "done", write.event.text, payload, seq=event_seq)
            applied = AppliedCompaction(run_id, summary_id, removed, pruned, version)
            if then is not None:
                then(conn, applied)
            return applied

    def record_failed_run(self, run: FailedRun) -> int:
        """A failed (or skipped) run: the history is untouched; the run and, optionally, its
        failed (or skipped) event row are recorded."""
        session_id = run.origin.session_id
        with write_session(self.factory) as session:
            if session.get(ChatSession, session_id) is None:
                raise SessionNotFound(f"session {session_id!r} not found")
            conn = session.connection()
            run_id = _insert_run(
                conn,
                run.origin,
                {
                    "status": run.status,
                    "code": run.code,
                    "error": run.error,
                    "tokens_before": run.tokens_before,
                    "model": run.model,
                    "durations": run.durations,
                },
            )
            if run.event:
                payload = {"runId": run_id, "code": run.code, **run.event.payload}
                event_row(conn, session_id, run.status, run.event.text, payload)
            return run_id

    def append_event(
        self, session_id: str, event: str, text: str, payload: dict[str, Any] | None = None
    ) -> int:
        """A compaction-event row (``role=system``, ``metadata.systemType``; docs/architecture.md,
        "Events"), with the next ``seq``: one statement on PostgreSQL (``store.event_rows``)."""
        if self.factory.kw["bind"].dialect.name == "postgresql":
            with read_connection(self.factory) as conn:  # autocommit: one statement
                values = event_values(session_id, event, text, payload or {})
                return event_row_alone(conn, values)
        with write_session(self.factory) as session:
            return event_row(session.connection(), session_id, event, text, payload or {})
