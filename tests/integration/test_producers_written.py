"""``trigger.resolve_written``: a chat turn's check goes on from the session row its append
returned, without a read, unless the row names another agent than the cached one."""

from __future__ import annotations

import dataclasses

import pytest
from sqlalchemy import update

from compaction.producers import trigger
from compaction.producers.context import Producers
from compaction.store.models import ChatSession


def counted_reads(ctx: Producers, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    reads: list[str] = []
    read = ctx.store.sessions.get_session

    def get_session(session_id: str) -> object:
        reads.append(session_id)
        return read(session_id)

    monkeypatch.setattr(ctx.store.sessions, "get_session", get_session)
    return reads


def test_the_written_row_is_used_as_it_is(ctx: Producers, monkeypatch: pytest.MonkeyPatch) -> None:
    session_id = ctx.store.create_session(model="m")
    ctx.contexts.resolve(session_id)  # the turn's first read
    written = dataclasses.replace(ctx.store.get_session(session_id), last_seq=7, model="other")
    reads = counted_reads(ctx, monkeypatch)
    context = trigger.resolve_written(ctx, written, None)
    assert context.info == written and context.model == "other" and reads == []


def test_another_agent_is_read_again(ctx: Producers, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx.store.create_agent("a1")
    ctx.store.set_agent("a1", threshold_percent=40)
    session_id = ctx.store.create_session(model="m")
    assert ctx.contexts.resolve(session_id).agent is None  # cached: no agent
    with ctx.store.factory.begin() as session:
        session.execute(
            update(ChatSession).where(ChatSession.id == session_id).values(agent_id="a1")
        )
    written = ctx.store.get_session(session_id)
    reads = counted_reads(ctx, monkeypatch)
    context = trigger.resolve_written(ctx, written, None)
    assert reads == [session_id]
    assert context.agent is not None and context.threshold_percent == 40
