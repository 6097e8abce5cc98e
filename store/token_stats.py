"""Per-turn token statistics (docs/architecture.md, "Tables"): after each model call the
gateway records the context's tokens per segment and the compaction decision; context stats
read the latest rows. A session keeps its newest ``KEEP_PER_SESSION`` rows."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, bindparam, delete, insert, select

from compaction.store.db import Repository, read_session, write_session
from compaction.store.history import require_session
from compaction.store.models import ContextTokenStat

#: rows a session keeps; older ones are deleted as new ones come
KEEP_PER_SESSION = 1_000


@dataclass(frozen=True, slots=True)
class TokenStat:
    session_id: str
    tokens: Mapping[str, int]
    total_tokens: int
    decision: str
    threshold_tokens: int | None = None
    model: str | None = None
    #: the chat model's usage for the call (``inputTokens``, ``outputTokens``)
    usage: dict[str, int] | None = None
    id: int | None = None
    created_at: datetime | None = None

    def to_wire(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "createdAt": self.created_at.isoformat() if self.created_at else None,
            "model": self.model,
            "tokensBySegment": self.tokens,
            "totalTokens": self.total_tokens,
            "thresholdTokens": self.threshold_tokens,
            "decision": self.decision,
            "usage": self.usage,
        }


class TokenStats(Repository):
    def record_token_stat(self, stat: TokenStat) -> int:
        """Store one turn's figures (``session_not_found`` for an unknown session); the id. A
        chat turn writes them with its reply instead (``Sessions.append_positioned``)."""
        with write_session(self.factory) as session:
            require_session(session, stat.session_id)
            return insert_token_stat(session.connection(), stat)

    def token_stats(self, session_id: str, limit: int = 10) -> list[TokenStat]:
        """The session's newest ``limit`` rows, newest first."""
        with read_session(self.factory) as session:
            rows = session.scalars(
                select(ContextTokenStat)
                .where(ContextTokenStat.session_id == session_id)
                .order_by(ContextTokenStat.id.desc())
                .limit(limit)
            )
            return [_stat(r) for r in rows]


def insert_token_stat(conn: Connection, stat: TokenStat) -> int:
    """Write ``stat`` in the caller's transaction, its session known to exist; the new id.
    Plain Core statements: no ORM unit of work on a chat turn (docs/benchmarks.md,
    "Overheads")."""
    values = {
        "session_id": stat.session_id,
        "model": stat.model,
        "tokens": dict(stat.tokens),
        "total_tokens": stat.total_tokens,
        "threshold_tokens": stat.threshold_tokens,
        "decision": stat.decision,
        "usage": stat.usage,
    }
    stat_id = int(conn.execute(_INSERT, values).scalar_one())
    conn.execute(_TRIM, {"b_session": stat.session_id, "b_keep": KEEP_PER_SESSION})
    return stat_id


_INSERT = insert(ContextTokenStat).returning(ContextTokenStat.id)

#: the rows past the newest ones kept, in one statement: the newest of them found on the
#: (session_id, id) index (none: NULL, nothing deleted); one round trip less on every turn
_PAST = (
    select(ContextTokenStat.id)
    .where(ContextTokenStat.session_id == bindparam("b_session"))
    .order_by(ContextTokenStat.id.desc())
    .offset(bindparam("b_keep"))
    .limit(1)
    .scalar_subquery()
)
_TRIM = delete(ContextTokenStat).where(
    ContextTokenStat.session_id == bindparam("b_session"), ContextTokenStat.id <= _PAST
)


def _stat(row: ContextTokenStat) -> TokenStat:
    return TokenStat(
        session_id=row.session_id,
        tokens=dict(row.tokens),
        total_tokens=row.total_tokens,
        decision=row.decision,
        threshold_tokens=row.threshold_tokens,
        model=row.model,
        usage=row.usage,
        id=row.id,
        created_at=row.created_at,
    )
