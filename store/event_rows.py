"""The UI's compaction-event rows (docs/architecture.md, "Events"): a run's own rows, written in
its transaction with a ``seq`` reserved there, and a row alone (the "compacting…" row a run
shows before its core runs)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, bindparam, insert, select

from compaction.core.errors import SessionNotFound
from compaction.store.appends import RESERVE_SEQS, reserve_seqs
from compaction.store.models import Base, utcnow
from compaction.store.records import EVENT_TYPE

MESSAGES = Base.metadata.tables["message"]
#: a message row (built once, values bound at execution; ``store.compactions`` for the summary)
INSERT_MESSAGE = insert(MESSAGES).returning(MESSAGES.c.id)


def event_values(session_id: str, event: str, text: str, payload: dict[str, Any]) -> dict[str, Any]:
    """A compaction-event row's columns but its ``seq`` (docs/architecture.md, "Events")."""
    return {
        "session_id": session_id,
        "seq_minor": 0,
        "role": "system",
        "content": text,
        "metadata": {"systemType": EVENT_TYPE, "event": event, **payload},
    }


def event_row(
    conn: Connection,
    session_id: str,
    event: str,
    text: str,
    payload: dict[str, Any],
    seq: int | None = None,
) -> int:
    """A compaction-event row; ``seq`` when one was reserved already."""
    values = event_values(session_id, event, text, payload)
    values["seq"] = reserve_seqs(conn, session_id, 1) if seq is None else seq
    return int(conn.execute(INSERT_MESSAGE, values).scalar_one())


# An event row alone (the "compacting…" row a run shows before its core runs) in one statement
# on PostgreSQL: its seq reserved by ``reserve_seqs``'s own UPDATE as a data-modifying CTE, run
# in autocommit, where a transaction took four round trips (BEGIN, reserve, INSERT, COMMIT);
# one statement is all or nothing on its own. SQLite has no data-modifying CTE: there the
# two statements run in one transaction.
_RESERVED = RESERVE_SEQS.cte("reserved")
_EVENT_COLUMNS = ("session_id", "seq_minor", "role", "content", "metadata", "created_at")
_APPEND_EVENT = (
    insert(MESSAGES)
    .from_select(
        ["seq", *_EVENT_COLUMNS],
        select(
            _RESERVED.c.last_seq,
            # bound as ``e_<column>``: a parameter named as a column of ``chat_session``
            # (``created_at``) would also be SET by the CTE's UPDATE
            *(bindparam(f"e_{name}", type_=MESSAGES.c[name].type) for name in _EVENT_COLUMNS),
        ),
        include_defaults=False,  # the flags' server defaults (false), as the models declare
    )
    .returning(MESSAGES.c.id)
)


def event_row_alone(conn: Connection, values: dict[str, Any]) -> int:
    """``_APPEND_EVENT`` (PostgreSQL, autocommit): the new row's id."""
    session_id = values["session_id"]
    params = {f"e_{name}": value for name, value in {**values, "created_at": utcnow()}.items()}
    row_id = conn.execute(_APPEND_EVENT, {**params, "b_session": session_id, "b_count": 1}).scalar()
    if row_id is None:  # no session row to reserve the seq on: nothing inserted
        raise SessionNotFound(f"session {session_id!r} not found")
    return int(row_id)
