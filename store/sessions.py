"""Agents, chat sessions and appending messages (``seq`` assigned atomically: ``appends``)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, bindparam, select, update
from sqlalchemy.orm import Session

from compaction.core.contract import NAME_RULE, SESSION_ID_RULE, valid_name, valid_session_id
from compaction.core.errors import Conflict, InvalidRequest, NotFound, SessionNotFound
from compaction.core.messages import Message
from compaction.core.storable import check_storable
from compaction.store.appends import Appended, insert_messages, insert_positioned
from compaction.store.db import (
    Repository,
    read_connection,
    read_session,
    write_connection,
    write_session,
)
from compaction.store.models import Agent, ChatSession
from compaction.store.records import SessionInfo
from compaction.store.token_stats import TokenStat, insert_token_stat


def check_session_id(session_id: str) -> str:
    """The one session-id rule (``compaction.core.contract.SESSION_ID_RULE``), for every way a
    session is created: HTTP, the command line, an import."""
    if not valid_session_id(session_id):
        raise InvalidRequest(SESSION_ID_RULE)
    return session_id


def check_name(value: str | None, label: str) -> None:
    """An agent id or a model name a column holds (``NAME_RULE``), refused naming ``label``."""
    if value is not None and not valid_name(value):
        raise InvalidRequest(f"{label}: {NAME_RULE}")


def parse_messages(messages: Sequence[Message | Mapping[str, Any]]) -> list[Message]:
    """Every message parsed and checked (``check_storable``: ``Message.from_dict`` checks a
    dict itself), the error naming its index."""
    parsed = []
    for index, item in enumerate(messages):
        try:
            parsed.append(
                check_storable(item) if isinstance(item, Message) else Message.from_dict(item)
            )
        except InvalidRequest as err:
            raise InvalidRequest(f"message {index}: {err.message}") from None
    return parsed


_SESSION_ROW = select(
    ChatSession.id,
    ChatSession.agent_id,
    ChatSession.model,
    ChatSession.compaction_version,
    ChatSession.last_seq,
).where(ChatSession.id == bindparam("b_session"))


class Sessions(Repository):
    def create_agent(
        self, agent_id: str, *, name: str | None = None, model: str | None = None
    ) -> str:
        check_name(agent_id, "agent id")
        check_name(model, "model")
        with write_session(self.factory) as session:
            _add_agent(session, agent_id, name=name, model=model)
        return agent_id

    def create_session(
        self,
        session_id: str | None = None,
        *,
        agent_id: str | None = None,
        model: str | None = None,
        messages: Sequence[Message | Mapping[str, Any]] = (),
        add_missing_agent: bool = False,
        title: str | None = None,
    ) -> str:
        """A new session (a random id when none is given), named ``title`` (``NAME_RULE``;
        ``None``: its id names it), with ``messages`` appended; with
        ``add_missing_agent``, an ``agent_id`` that does not exist is created with blank
        settings (the system's apply), else refused. One transaction: a refused import stores
        no session, no agent."""
        session_id = check_session_id(session_id or uuid.uuid4().hex)
        check_name(agent_id, "agent id")
        check_name(model, "model")
        check_name(title, "title")
        parsed = parse_messages(messages)
        with write_session(self.factory) as session:
            if agent_id is not None and session.get(Agent, agent_id) is None:
                if not add_missing_agent:
                    raise NotFound(f"agent {agent_id!r} not found")
                _add_agent(session, agent_id)
            if session.get(ChatSession, session_id) is not None:
                raise Conflict(f"session {session_id!r} already exists")
            session.add(ChatSession(id=session_id, agent_id=agent_id, model=model, title=title))
            if parsed:
                session.flush()  # the session row before its messages (the foreign key)
                insert_messages(session, session_id, parsed, None)
        return session_id

    def get_session(self, session_id: str) -> SessionInfo:
        # A plain row on a Core connection, the statement built once: the threshold check reads
        # this before every model call.
        with read_connection(self.factory) as connection:
            return _require_row(connection, session_id)

    def rename_session(self, session_id: str, title: str | None) -> None:
        """The name a user sees (``NAME_RULE``); ``None`` clears it (the id names the session
        again). A missing session is ``session_not_found``."""
        check_name(title, "title")
        with write_session(self.factory) as session:
            renamed = session.execute(
                update(ChatSession).where(ChatSession.id == session_id).values(title=title)
            )
            if not renamed.rowcount:  # type: ignore[attr-defined]
                raise SessionNotFound(f"session {session_id!r} not found")

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
        content, text no database stores, a tool-call id the session or the batch holds
        already) is refused with ``invalid_request`` before anything is written."""
        parsed = parse_messages(messages)
        if not parsed:
            return []
        with write_session(self.factory) as session:
            return insert_messages(session, session_id, parsed, metadata)

    def append_positioned(
        self,
        session_id: str,
        messages: Sequence[Message | Mapping[str, Any]],
        *,
        stat: TokenStat | None = None,
    ) -> Appended:
        """``append_messages``, each new row's id with its seq, and the session's row as the
        append left it: a chat turn shows what it stored by building the rows from its own
        messages, and goes on from that row, instead of reading either back. ``stat``: the
        turn's token figures, written in the same transaction (its reply and its record are
        one commit). Plain Core statements (docs/benchmarks.md, "Overheads")."""
        parsed = parse_messages(messages)
        if stat is not None and stat.session_id != session_id:
            raise InvalidRequest("the token figures belong to another session")
        with write_connection(self.factory) as conn:
            if parsed:
                appended = insert_positioned(conn, session_id, parsed, None)
            else:
                appended = Appended([], _require_row(conn, session_id))
            if stat is not None:
                insert_token_stat(conn, stat)
            return appended


def _require_row(conn: Connection, session_id: str) -> SessionInfo:
    """The session's row; ``session_not_found`` without one."""
    row = conn.execute(_SESSION_ROW, {"b_session": session_id}).first()
    if row is None:
        raise SessionNotFound(f"session {session_id!r} not found")
    return SessionInfo(*row)


def _add_agent(
    session: Session, agent_id: str, *, name: str | None = None, model: str | None = None
) -> None:
    if session.get(Agent, agent_id) is None:
        session.add(Agent(id=agent_id, name=name, model=model))
