"""A review's drafts (docs/architecture.md, "Review"): a compaction written for the user to
read, edit and apply, the history untouched until then.

A draft is ``ready`` until it is applied, discarded or expires (``expires_at``; the expiry rule
is ``draft_status``). One ready draft per session: writing one discards the older. Applying goes
through the one write path, ``Compactions.apply_compaction``, whose transaction also closes the
draft (``then``): a draft that is no longer ready refuses the whole write (``draft_closed``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, insert, select, update

from compaction.core.boundaries import token_counts
from compaction.core.config import CompactionConfig
from compaction.core.errors import DraftClosed, NotFound
from compaction.core.messages import Message
from compaction.store.compactions import Compactions
from compaction.store.db import Repository, read_session, write_session
from compaction.store.history import require_session
from compaction.store.models import Base, CompactionDraft, utcnow
from compaction.store.records import AppliedCompaction, CompactionWrite

_DRAFTS = Base.metadata.tables["compaction_draft"]


def _aware(value: datetime) -> datetime:
    """SQLite gives the store's UTC times back without their offset."""
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def draft_status(status: str, expires_at: datetime, now: datetime) -> str:
    """The expiry rule: a ``ready`` draft past ``expires_at`` is ``expired`` (whether or not
    ``expire_drafts`` wrote it yet); the other statuses are final."""
    if status == "ready" and _aware(expires_at) <= _aware(now):
        return "expired"
    return status


def summary_tokens(text: str, config: CompactionConfig) -> int:
    """A draft's summary row as estimated: the worker's figure in ``plan`` and the apply's
    re-check of an edited text count it the same way."""
    return token_counts([Message(role="user", content=text)], config)[0]


@dataclass(frozen=True, slots=True, kw_only=True)
class DraftWrite:
    """What a review's worker writes (``worker.drafts``)."""

    session_id: str
    request_id: str | None
    focus: str | None
    summary: str
    base_version: int
    #: what applying writes (docs/architecture.md, "Review"): the stage, the language, the
    #: summary's ``seq`` range and the ids it replaces, the pruned ids
    plan: dict[str, Any]
    receipt: dict[str, Any] | None
    tokens_before: int
    tokens_after: int
    model: str | None
    input_tokens: int | None
    output_tokens: int | None
    cost: float | None
    expires_at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class DraftRecord(DraftWrite):
    """A stored draft: what the worker wrote, and what became of it."""

    id: int
    status: str
    edited: bool
    run_id: int | None
    created_at: datetime


def _record(row: CompactionDraft, now: datetime) -> DraftRecord:
    return DraftRecord(
        id=row.id,
        session_id=row.session_id,
        request_id=row.request_id,
        status=draft_status(row.status, row.expires_at, now),
        focus=row.focus,
        summary=row.summary,
        edited=row.edited,
        base_version=row.base_version,
        plan=row.plan,
        receipt=row.receipt,
        tokens_before=row.tokens_before,
        tokens_after=row.tokens_after,
        model=row.model,
        input_tokens=row.input_tokens,
        output_tokens=row.output_tokens,
        cost=row.cost,
        run_id=row.run_id,
        created_at=_aware(row.created_at),
        expires_at=_aware(row.expires_at),
    )


def _close(conn: Connection, draft_id: int, now: datetime, **values: Any) -> None:
    """Change a ready, unexpired draft (``values``); ``draft_closed`` when it is not one."""
    changed = conn.execute(
        update(CompactionDraft)
        .where(
            CompactionDraft.id == draft_id,
            CompactionDraft.status == "ready",
            CompactionDraft.expires_at > now,
        )
        .values(**values)
    ).rowcount
    if changed == 0:
        status = conn.scalar(select(CompactionDraft.status).where(CompactionDraft.id == draft_id))
        if status is None:
            raise NotFound(f"draft {draft_id} not found")
        shown = "expired" if status == "ready" else status
        raise DraftClosed(f"draft {draft_id} is {shown}: write a new one (/compact --review)")


def _expire(conn: Connection, now: datetime) -> int:
    """``expired`` written on the ready drafts past their time (``draft_status`` reads them so
    already); how many."""
    changed = conn.execute(
        update(CompactionDraft)
        .where(CompactionDraft.status == "ready", CompactionDraft.expires_at <= now)
        .values(status="expired")
    )
    return int(changed.rowcount)


class Drafts(Repository):
    """Written by a review's worker; read, edited, discarded and applied by the user."""

    def create_draft(self, draft: DraftWrite) -> DraftRecord:
        """The session's new ready draft; its older ready one discarded in the same
        transaction, and every session's drafts past their time written ``expired``."""
        now = utcnow()
        with write_session(self.factory) as session:
            require_session(session, draft.session_id)
            conn = session.connection()
            _expire(conn, now)
            conn.execute(
                update(CompactionDraft)
                .where(
                    CompactionDraft.session_id == draft.session_id,
                    CompactionDraft.status == "ready",
                )
                .values(status="discarded")
            )
            values = {name: getattr(draft, name) for name in DraftWrite.__dataclass_fields__}
            draft_id = conn.execute(
                insert(_DRAFTS).returning(_DRAFTS.c.id), {**values, "created_at": now}
            ).scalar_one()
            row = session.get(CompactionDraft, int(draft_id))
            assert row is not None
            return _record(row, now)

    def get_draft(self, draft_id: int) -> DraftRecord:
        with read_session(self.factory) as session:
            row = session.get(CompactionDraft, draft_id)
            if row is None:
                raise NotFound(f"draft {draft_id} not found")
            return _record(row, utcnow())

    def session_drafts(self, session_id: str) -> list[DraftRecord]:
        """The session's drafts, newest first."""
        with read_session(self.factory) as session:
            require_session(session, session_id)
            rows = session.scalars(
                select(CompactionDraft)
                .where(CompactionDraft.session_id == session_id)
                .order_by(CompactionDraft.id.desc())
            )
            now = utcnow()
            return [_record(row, now) for row in rows]

    def edit_draft(
        self, draft_id: int, summary: str, receipt: dict[str, Any] | None
    ) -> DraftRecord:
        """The user's text replaces the summary (``edited``), with the receipt counted on it;
        only a ready draft."""
        with write_session(self.factory) as session:
            values = {"summary": summary, "edited": True, "receipt": receipt}
            _close(session.connection(), draft_id, utcnow(), **values)
        return self.get_draft(draft_id)

    def discard_draft(self, draft_id: int) -> DraftRecord:
        with write_session(self.factory) as session:
            _close(session.connection(), draft_id, utcnow(), status="discarded")
        return self.get_draft(draft_id)

    def expire_drafts(self) -> int:
        """Write ``expired`` on the ready drafts past their time; how many."""
        with write_session(self.factory) as session:
            return _expire(session.connection(), utcnow())

    def apply_draft(self, draft_id: int, write: CompactionWrite) -> AppliedCompaction:
        """``write`` (the draft's plan, built by ``producers.drafts``) through the one write
        path, the draft closed as ``applied`` in the same fenced transaction: a stale version is
        ``lock_lost``, a draft no longer ready ``draft_closed``, and either changes nothing."""
        now = utcnow()

        def close(conn: Connection, applied: AppliedCompaction) -> None:
            _close(conn, draft_id, now, status="applied", run_id=applied.run_id)

        return Compactions(self.factory).apply_compaction(write, then=close)
