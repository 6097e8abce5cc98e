"""The three history views (docs/architecture.md, "Tables").

``compacted`` is what the LLM gets: no compacted rows, no compaction-event rows, placeholders
for pruned rows, in ``(seq, seq_minor)`` order (head, summary, tail). ``display`` is that view
with the event rows in place: the user's screen after a reload. ``full`` is every row in
conversation order, each summary right after the rows it replaced.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import ColumnElement, Connection, Select, bindparam, or_, select
from sqlalchemy.orm import Session

from compaction.core.errors import InvalidRequest, SessionNotFound
from compaction.core.messages import Message, trusted_tool_call
from compaction.core.pruning import PLACEHOLDER
from compaction.store.db import Repository, read_connection, read_session
from compaction.store.models import ChatSession, CompactionRun
from compaction.store.models import Message as MessageRow
from compaction.store.records import EVENT_TYPE, StoredMessage, View


def not_event() -> ColumnElement[bool]:
    """Rows that are conversation, not the UI's compaction-event records."""
    system_type = MessageRow.meta["systemType"].as_string()
    return or_(MessageRow.meta.is_(None), system_type.is_(None), system_type != EVENT_TYPE)


_COLUMNS = (
    MessageRow.id,
    MessageRow.role,
    MessageRow.content,
    MessageRow.tool_calls,
    MessageRow.tool_call_id,
    MessageRow.seq,
    MessageRow.seq_minor,
    MessageRow.created_at,
    MessageRow.compacted_at,
    MessageRow.compacted_into_id,
    MessageRow.is_compaction_summary,
    MessageRow.pruned_at,
    MessageRow.pruned_run_id,
    MessageRow.meta,
    MessageRow.pinned,
)
#: Positions in ``_COLUMNS`` read before the rows become objects.
_PRUNED_AT, _PRUNED_RUN = 11, 12
assert (
    _COLUMNS[_PRUNED_AT] is MessageRow.pruned_at
    and _COLUMNS[_PRUNED_RUN] is MessageRow.pruned_run_id
)


def to_stored(row: Sequence[Any], placeholder: str | None = None) -> StoredMessage:
    """A row of ``_COLUMNS`` as a ``StoredMessage`` (unpacked by position: by-name access on
    10,000 rows costs more than the query)."""
    (
        id_,
        role,
        content,
        tool_calls,
        tool_call_id,
        seq,
        seq_minor,
        created_at,
        compacted_at,
        compacted_into_id,
        is_summary,
        pruned_at,
        _pruned_run,
        meta,
        pinned,
    ) = row
    calls = (
        [trusted_tool_call(c["id"], c["name"], c.get("arguments") or "") for c in tool_calls]
        if tool_calls
        else []
    )
    original = None
    if placeholder is not None:
        content, original = placeholder, content
    # The row's flag, not the text, says what is a summary (a user may type the marker).
    message = Message.from_trusted(
        role, content, calls, tool_call_id, id_, original, is_summary, pinned
    )
    # Positional: keyword arguments cost twice as much over 10,000 rows.
    return StoredMessage(
        message,
        seq,
        seq_minor,
        created_at,
        compacted_at,
        compacted_into_id,
        is_summary,
        pruned_at,
        meta,
    )


def _placeholders(session: Session | Connection, rows: Sequence[Any]) -> dict[int, str]:
    """The placeholder of each pruned run, in the language that run summarized in."""
    # By position: by-name access on every row costs more than the query here.
    run_ids = {r[_PRUNED_RUN] for r in rows if r[_PRUNED_AT] is not None and r[_PRUNED_RUN]}
    if not run_ids:
        return {}
    languages = session.execute(
        select(CompactionRun.id, CompactionRun.language).where(CompactionRun.id.in_(run_ids))
    ).all()
    return {run_id: PLACEHOLDER.get(lang or "en", PLACEHOLDER["en"]) for run_id, lang in languages}


def require_session(session: Session | Connection, session_id: str) -> None:
    if session.scalar(select(ChatSession.id).where(ChatSession.id == session_id)) is None:
        raise SessionNotFound(f"session {session_id!r} not found")


_VIEWS: tuple[View, ...] = ("compacted", "display", "full")


def _history_query(view: View, incremental: bool) -> Select[Any]:
    # Plain rows, not ORM objects: loading a 10,000-message session is the hot path.
    query = select(*_COLUMNS).where(MessageRow.session_id == bindparam("session_id"))
    if incremental:
        query = query.where(MessageRow.seq > bindparam("after_seq"))
    if view != "full":
        # Event rows are never compacted (the write skips them), so ``display`` needs no more.
        query = query.where(MessageRow.compacted_at.is_(None))
    if view == "compacted":
        query = query.where(not_event())
    return query.order_by(MessageRow.seq, MessageRow.seq_minor)


# Built once, values bound at execution: building the SELECT on every call cost more than
# handling a 1,000-row result (0.6 ms of a 5 ms load).
_HISTORY_QUERIES = {
    (view, incremental): _history_query(view, incremental)
    for view in _VIEWS
    for incremental in (True, False)
}


def read_view(
    session: Session | Connection, session_id: str, view: View = "compacted", after_seq: int = 0
) -> list[StoredMessage]:
    """``History.load_history`` on a connection, or inside a transaction the caller holds (a
    pin checks the view it is about to change: ``compaction.store.pins``)."""
    query = _HISTORY_QUERIES.get((view, after_seq > 0))
    if query is None:
        expected = ", ".join(repr(v) for v in _VIEWS)
        raise InvalidRequest(f"unknown view {view!r}; expected one of {expected}")
    params = {"session_id": session_id, "after_seq": after_seq}
    # Core execution: the ORM's result machinery adds nothing for plain columns.
    conn = session.connection() if isinstance(session, Session) else session
    rows = conn.execute(query, params).all()
    if not rows:  # an empty session, or none at all: only then one more query
        require_session(session, session_id)
    if view == "full":
        return [to_stored(row) for row in rows]
    placeholders = _placeholders(session, rows)
    return [
        to_stored(row, placeholders.get(row[_PRUNED_RUN] or 0, PLACEHOLDER["en"]))
        if row[_PRUNED_AT] is not None
        else to_stored(row)
        for row in rows
    ]


class History(Repository):
    def load_history(
        self, session_id: str, view: View = "compacted", *, after_seq: int = 0
    ) -> list[StoredMessage]:
        """The session's history in ``view`` (compacted: the model's; display: the user's
        screen; full: every row); ``after_seq`` keeps only later rows (incremental reads)."""
        # A Core connection, no ORM session around it: a session's set-up and tear-down cost
        # about a tenth of a 466-row load (docs/benchmarks.md, "Overheads").
        with read_connection(self.factory) as conn:
            return read_view(conn, session_id, view, after_seq)

    def latest_summary(self, session_id: str) -> StoredMessage | None:
        """The visible summary (after a compaction only the newest one is visible)."""
        query = (
            select(*_COLUMNS)
            .where(
                MessageRow.session_id == session_id,
                MessageRow.is_compaction_summary,
                MessageRow.compacted_at.is_(None),
            )
            .order_by(MessageRow.seq.desc(), MessageRow.seq_minor.desc())
            .limit(1)
        )
        with read_session(self.factory) as session:
            require_session(session, session_id)
            row = session.execute(query).first()
            return to_stored(row) if row is not None else None
