"""Appending messages (docs/architecture.md, "Tables"): ``seq`` values reserved atomically on
the session's row, the tool-call ids checked against the batch and the stored history, the rows
written in one INSERT; in the caller's transaction (``Sessions`` opens it)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    JSON,
    BindParameter,
    CompoundSelect,
    Connection,
    bindparam,
    column,
    func,
    insert,
    literal,
    select,
    true,
    union_all,
    update,
)
from sqlalchemy.orm import Session

from compaction.core.errors import InvalidRequest, SessionNotFound
from compaction.core.messages import Message
from compaction.store.models import ChatSession
from compaction.store.models import Message as MessageRow
from compaction.store.records import SessionInfo


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


RESERVE_SEQS = (  # built once: every append and event row runs it
    update(ChatSession)
    .where(ChatSession.id == bindparam("b_session"))
    .values(last_seq=ChatSession.last_seq + bindparam("b_count"))
    # the row as the append leaves it, in SessionInfo's order: a turn reads it no more
    .returning(
        ChatSession.id,
        ChatSession.agent_id,
        ChatSession.model,
        ChatSession.compaction_version,
        ChatSession.last_seq,
    )
)


def reserve_seqs(session: Session | Connection, session_id: str, count: int) -> int:
    """Reserve ``count`` consecutive ``seq`` values; returns the first. The UPDATE locks the
    session row, so concurrent appends queue instead of colliding."""
    return _reserve(session, session_id, count).last_seq - count + 1


def _reserve(session: Session | Connection, session_id: str, count: int) -> SessionInfo:
    """``reserve_seqs``: the session's row once reserved (``last_seq`` the block's last)."""
    row = session.execute(RESERVE_SEQS, {"b_session": session_id, "b_count": count}).first()
    if row is None:
        raise SessionNotFound(f"session {session_id!r} not found")
    return SessionInfo(*row)


def _batch_ids(messages: Sequence[Message]) -> tuple[dict[str, int], dict[str, int]]:
    """The batch's call ids and the ids its tool results answer, each with its message's index;
    an id twice among the calls, or answered twice, is refused."""
    calls: dict[str, int] = {}
    results: dict[str, int] = {}
    for index, message in enumerate(messages):
        for call in message.tool_calls:
            if call.id in calls:
                raise InvalidRequest(f"message {index}: tool call id {call.id!r} is used twice")
            calls[call.id] = index
        if message.role == "tool" and message.tool_call_id is not None:
            if message.tool_call_id in results:
                raise InvalidRequest(
                    f"message {index}: tool call id {message.tool_call_id!r} is answered twice"
                )
            results[message.tool_call_id] = index
    return calls, results


def _stored_ids_query(elements: Callable[..., Any]) -> CompoundSelect[Any]:
    """Which ids of ``b_ids`` the session's stored tool results answer, and which of ``b_calls``
    the calls of its last assistant turn with calls use: one query, answered by the index on
    ``(session_id, tool_call_id)`` and a backward walk to that turn. Every earlier call of a
    history a compaction accepts has its result stored, so the two cover every stored call.
    ``elements`` is the dialect's expansion of a JSON array."""
    session: BindParameter[str] = bindparam("b_session")
    last_calls = (
        select(MessageRow.tool_calls)
        .where(MessageRow.session_id == session, MessageRow.tool_calls.is_not(None))
        .order_by(MessageRow.seq.desc(), MessageRow.seq_minor.desc())
        .limit(1)
        .subquery()
    )
    element = elements(last_calls.c.tool_calls).table_valued(column("value", JSON))
    call_id = element.c.value["id"].as_string()
    open_calls = (
        select(literal("call"), call_id)
        .select_from(last_calls)
        .join(element, true())
        .where(call_id.in_(bindparam("b_calls", expanding=True)))
    )
    results = select(literal("result"), MessageRow.tool_call_id).where(
        MessageRow.session_id == session,
        MessageRow.tool_call_id.in_(bindparam("b_ids", expanding=True)),
    )
    return union_all(open_calls, results)


_INSERT_MESSAGES = insert(MessageRow).returning(MessageRow.id, sort_by_parameter_order=True)

_STORED_IDS = {
    "postgresql": _stored_ids_query(func.json_array_elements),
    "sqlite": _stored_ids_query(func.json_each),
}


def _check_stored_ids(
    conn: Connection, session_id: str, calls: dict[str, int], results: dict[str, int]
) -> None:
    """Refuse a call id the session stores already, and a second result for a stored call: a
    compaction refuses a history that repeats one (docs/architecture.md, "The algorithm")."""
    if not calls and not results:
        return
    query = _STORED_IDS[conn.dialect.name]
    params = {"b_session": session_id, "b_calls": list(calls), "b_ids": [*calls, *results]}
    found = conn.execute(query, params).all()
    stored = {id_ for _kind, id_ in found}  # a call, or the call a stored result answers
    answered = {id_ for kind, id_ in found if kind == "result"}
    clashes = [
        (index, f"tool call id {id_!r} is already used in session {session_id!r}")
        for id_, index in calls.items()
        if id_ in stored
    ] + [
        (index, f"tool call id {id_!r} already has a result in session {session_id!r}")
        for id_, index in results.items()
        if id_ in answered
    ]
    if clashes:
        index, problem = min(clashes)
        raise InvalidRequest(f"message {index}: {problem}")


def insert_messages(
    session: Session,
    session_id: str,
    messages: Sequence[Message],
    metadata: Mapping[str, Any] | None,
) -> list[int]:
    """Append checked messages in the caller's transaction; returns their ids."""
    if not messages:
        return []
    conn = session.connection()
    return [id_ for id_, _ in insert_positioned(conn, session_id, messages, metadata).rows]


@dataclass(frozen=True, slots=True)
class Appended:
    """What an append wrote: each new row's ``(id, seq)``, and the session's row as the append
    left it (returned by its UPDATE: a chat turn reads it no more)."""

    rows: list[tuple[int, int]]
    session: SessionInfo


def insert_positioned(
    conn: Connection,
    session_id: str,
    messages: Sequence[Message],
    metadata: Mapping[str, Any] | None,
) -> Appended:
    """``insert_messages`` (at least one message), on a Core connection (an ORM session's own,
    or ``write_connection``'s)."""
    calls, results = _batch_ids(messages)
    info = _reserve(conn, session_id, len(messages))
    first = info.last_seq - len(messages) + 1
    # The UPDATE above locks the session row, so no concurrent append slips an id in between;
    # a session whose first seq this is holds nothing to clash with.
    if first > 1:
        _check_stored_ids(conn, session_id, calls, results)
    rows = [
        {
            **message_values(m),
            "session_id": session_id,
            "seq": first + i,
            "seq_minor": 0,
            "metadata": dict(metadata) if metadata else None,  # the column's key (Core)
        }
        for i, m in enumerate(messages)
    ]
    # A Core INSERT: every row has the same keys (NULLs rendered), so one statement batches
    # them all, without the ORM's bulk-insert machinery (docs/benchmarks.md, "Overheads").
    ids = conn.execute(_INSERT_MESSAGES, rows).scalars().all()
    return Appended([(id_, first + i) for i, id_ in enumerate(ids)], info)
