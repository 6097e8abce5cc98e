"""Agents, chat sessions and appending messages (``seq`` assigned atomically)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, bindparam, insert, select, update
from sqlalchemy.orm import Session

from compaction.contract import MAX_SESSION_ID, valid_session_id
from compaction.errors import InvalidRequest, SessionNotFound
from compaction.messages import Message
from store.db import Repository, read_session, write_session
from store.models import Agent, ChatSession
from store.models import Message as MessageRow
from store.records import SessionInfo


def message_values(message: Message) -> dict[str, Any]:
    return {
        "role": message.role,
        "content": message.content,
        "tool_calls": [
            {"id": c.id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls
        ]
        or None,
        "tool_call_id": message.tool_call_id,
    }


_RESERVE = (  # built once: every append and event row runs it
    update(ChatSession)
    .where(ChatSession.id == bindparam("b_session"))
    .values(last_seq=ChatSession.last_seq + bindparam("b_count"))
    .returning(ChatSession.last_seq)
)


def reserve_seqs(session: Session | Connection, session_id: str, count: int) -> int:
    """Reserve ``count`` consecutive ``seq`` values; returns the first. The UPDATE locks the
    session row, so concurrent appends queue instead of colliding."""
    last = session.execute(_RESERVE, {"b_session": session_id, "b_count": count}).scalar()
    if last is None:
        raise SessionNotFound(f"session {session_id!r} not found")
    return int(last) - count + 1


def check_session_id(session_id: str) -> str:
    if not valid_session_id(session_id):
        raise InvalidRequest(f"a session id is a string of 1 to {MAX_SESSION_ID} characters")
    return session_id


class Sessions(Repository):
    def create_agent(
        self, agent_id: str, *, name: str | None = None, model: str | None = None
    ) -> str:
        with write_session(self.factory) as session:
            if session.get(Agent, agent_id) is None:
                session.add(Agent(id=agent_id, name=name, model=model))
        return agent_id

    def create_session(
        self,
        session_id: str | None = None,
        *,
        agent_id: str | None = None,
        model: str | None = None,
    ) -> str:
        session_id = check_session_id(session_id or uuid.uuid4().hex)
        with write_session(self.factory) as session:
            if agent_id is not None and session.get(Agent, agent_id) is None:
                raise InvalidRequest(f"agent {agent_id!r} not found")
            if session.get(ChatSession, session_id) is not None:
                raise InvalidRequest(f"session {session_id!r} already exists")
            session.add(ChatSession(id=session_id, agent_id=agent_id, model=model))
        return session_id

    def get_session(self, session_id: str) -> SessionInfo:
        # A plain row: the threshold check reads this before every model call.
        query = select(
            ChatSession.id,
            ChatSession.agent_id,
            ChatSession.model,
            ChatSession.compaction_version,
            ChatSession.last_seq,
        ).where(ChatSession.id == session_id)
        with read_session(self.factory) as session:
            row = session.connection().execute(query).first()
        if row is None:
            raise SessionNotFound(f"session {session_id!r} not found")
        return SessionInfo(*row)

    def session_exists(self, session_id: str) -> bool:
        with read_session(self.factory) as session:
            return (
                session.scalar(select(ChatSession.id).where(ChatSession.id == session_id))
                is not None
            )

    def append_messages(
        self,
        session_id: str,
        messages: Sequence[Message | Mapping[str, Any]],
        *,
        metadata: Mapping[str, Any] | None = None,
    ) -> list[int]:
        """Append in order; returns the new ids. Bad input (an unknown role, non-string
        content) is refused with ``invalid_request`` before anything is written."""
        parsed = []
        for index, item in enumerate(messages):
            try:
                parsed.append(item if isinstance(item, Message) else Message.from_dict(item))
            except InvalidRequest as err:
                raise InvalidRequest(f"message {index}: {err.message}") from None
        if not parsed:
            return []
        with write_session(self.factory) as session:
            first = reserve_seqs(session, session_id, len(parsed))
            rows = [
                {
                    **message_values(m),
                    "session_id": session_id,
                    "seq": first + i,
                    "seq_minor": 0,
                    "meta": dict(metadata) if metadata else None,
                }
                for i, m in enumerate(parsed)
            ]
            # render_nulls keeps one statement shape for every row, so the driver batches
            # them all (the ORM default splits the batch wherever a NULL column changes).
            ids = session.scalars(
                insert(MessageRow)
                .returning(MessageRow.id, sort_by_parameter_order=True)
                .execution_options(render_nulls=True),
                rows,
            ).all()
        return list(ids)
