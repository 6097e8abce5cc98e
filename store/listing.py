"""Listings for a console or an API (docs/architecture.md, "Tables"): the sessions, newest
first, each with the size of its compacted view, and the agents' ids."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Select, func, select

from compaction.core.errors import SessionNotFound
from compaction.store.db import Repository, read_session
from compaction.store.history import not_event
from compaction.store.models import Agent, ChatSession
from compaction.store.models import Message as MessageRow

#: a listing's largest page
MAX_LISTED = 1_000


@dataclass(frozen=True, slots=True)
class SessionListing:
    id: str
    agent_id: str | None
    model: str | None
    created_at: datetime
    #: rows of the compacted view (what the model gets), as ``load_history`` returns them
    messages: int
    #: the name a user sees; ``None``: the id names it
    title: str | None = None


def _listing() -> Select[Any]:
    visible = (
        select(func.count())
        .where(
            MessageRow.session_id == ChatSession.id,
            MessageRow.compacted_at.is_(None),
            not_event(),
        )
        .correlate(ChatSession)
        .scalar_subquery()
    )
    return select(
        ChatSession.id,
        ChatSession.agent_id,
        ChatSession.model,
        ChatSession.created_at,
        visible,
        ChatSession.title,
    )


class Listing(Repository):
    def list_sessions(self, limit: int = 100) -> list[SessionListing]:
        """The ``limit`` newest sessions (at most ``MAX_LISTED``), newest first."""
        query = _listing().order_by(ChatSession.created_at.desc(), ChatSession.id)
        with read_session(self.factory) as session:
            rows = session.execute(query.limit(max(0, min(limit, MAX_LISTED)))).all()
            return [SessionListing(*row) for row in rows]

    def session_listing(self, session_id: str) -> SessionListing:
        with read_session(self.factory) as session:
            row = session.execute(_listing().where(ChatSession.id == session_id)).first()
        if row is None:
            raise SessionNotFound(f"session {session_id!r} not found")
        return SessionListing(*row)

    def list_agents(self) -> list[str]:
        with read_session(self.factory) as session:
            return list(session.scalars(select(Agent.id).order_by(Agent.id)))
