"""The session's version fence (docs/architecture.md, "Tables"): the first statement of a
compaction's write, with the summary's INSERT on PostgreSQL (``store.compactions``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, bindparam, insert, literal, select, true, update

from compaction.core.errors import LockLost, SessionNotFound
from compaction.store.event_rows import INSERT_MESSAGE, MESSAGES
from compaction.store.models import ChatSession
from compaction.store.records import SummaryWrite

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


# On PostgreSQL the fence and the summary's INSERT are one statement (the fence's UPDATE as a
# data-modifying CTE, the summary inserted from its row, so a stale version inserts nothing):
# one round trip less (docs/architecture.md, "The write"). The summary's ``seq_minor`` is the
# new version. Parameters are ``s_`` named: one named as a ``chat_session`` column would also
# be SET by the CTE's UPDATE.
_FENCED = _FENCE.cte("fenced")
_SUMMARY_COLUMNS = ("session_id", "seq", "content", "created_at")
_SUMMARY = (
    insert(MESSAGES)
    .from_select(
        [*_SUMMARY_COLUMNS, "seq_minor", "role", "is_compaction_summary"],
        select(
            *(bindparam(f"s_{name}", type_=MESSAGES.c[name].type) for name in _SUMMARY_COLUMNS),
            _FENCED.c.compaction_version,
            literal("user"),
            true(),
        ),
        include_defaults=False,  # ``pinned``'s server default (false), as the models declare
    )
    .returning(MESSAGES.c.id)
    .cte("summary")
)
_FENCE_AND_SUMMARY = select(
    _FENCED.c.compaction_version, _FENCED.c.last_seq, _SUMMARY.c.id
).select_from(_FENCED.join(_SUMMARY, true()))  # one row each, or none: no join condition


def fence(
    conn: Connection,
    session_id: str,
    expected_version: int,
    seqs: int,
    summary: dict[str, Any] | None = None,
) -> tuple[int, int, int | None]:
    """Bump the session's version if it is still ``expected_version`` and reserve ``seqs``
    ``seq`` values; with ``summary`` (its ``s_`` values, PostgreSQL only) insert that row in
    the same statement. Returns the new version, the first reserved ``seq`` and the summary's
    id (``None`` without one)."""
    params = {"b_session": session_id, "b_expected": expected_version, "b_seqs": seqs}
    row: Any
    if summary is None:
        row = conn.execute(_FENCE, params).one_or_none()
    else:
        row = conn.execute(_FENCE_AND_SUMMARY, {**params, **summary}).one_or_none()
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
    version, last_seq = row[0], row[1]
    summary_id = int(row[2]) if summary is not None else None
    return int(version), int(last_seq) - seqs + 1, summary_id


def summary_values(session_id: str, summary: SummaryWrite, now: datetime) -> dict[str, Any]:
    """The summary row's values as ``_FENCE_AND_SUMMARY`` binds them."""
    return {
        "s_session_id": session_id,
        "s_seq": summary.last_seq,
        "s_content": summary.text,
        "s_created_at": now,
    }


def insert_summary(conn: Connection, values: dict[str, Any], version: int) -> int:
    """The summary row on its own (SQLite: no data-modifying CTE); ``values`` as
    ``summary_values`` gives them."""
    row = {name.removeprefix("s_"): value for name, value in values.items()}
    row.update(seq_minor=version, role="user", is_compaction_summary=True)
    return int(conn.execute(INSERT_MESSAGE, row).scalar_one())
