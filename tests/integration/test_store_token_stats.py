"""Per-turn token statistics in the store (docs/architecture.md, "Tables"): recorded, read
newest first, bounded per session, gone with their session; on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy import delete

from compaction.core.errors import DatabaseError, InvalidRequest, SessionNotFound
from compaction.core.messages import Message
from compaction.store import Store
from compaction.store import sessions as sessions_module
from compaction.store import token_stats as token_stats_module
from compaction.store.models import ChatSession
from compaction.store.token_stats import TokenStat


def stat(session_id: str, total: int, decision: str = "below_threshold") -> TokenStat:
    tokens = {"system": 10, "history": total - 30, "loop": 15, "state": 5}
    return TokenStat(session_id, tokens, total, decision, 900, "m", {"inputTokens": total})


def test_rows_come_back_newest_first_with_their_figures(store: Store) -> None:
    store.create_session("s1")
    store.create_session("s2")
    first = store.record_token_stat(stat("s1", 100))
    store.record_token_stat(stat("s2", 999))
    second = store.record_token_stat(stat("s1", 200, "compacted"))
    rows = store.token_stats("s1")
    assert [r.id for r in rows] == [second, first]
    latest = rows[0].to_wire()
    assert latest["decision"] == "compacted" and latest["totalTokens"] == 200
    assert latest["tokensBySegment"]["history"] == 170
    assert latest["thresholdTokens"] == 900 and latest["usage"] == {"inputTokens": 200}
    assert latest["createdAt"] is not None
    assert [r.total_tokens for r in store.token_stats("s1", limit=1)] == [200]


def test_a_session_keeps_its_newest_rows_only(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(token_stats_module, "KEEP_PER_SESSION", 3)
    store.create_session("s1")
    store.create_session("s2")
    store.record_token_stat(stat("s2", 50))
    for total in range(100, 106):
        store.record_token_stat(stat("s1", total))
    assert [r.total_tokens for r in store.token_stats("s1")] == [105, 104, 103]
    assert len(store.token_stats("s2")) == 1  # another session's rows are untouched


def test_unknown_session_and_cascade(store: Store) -> None:
    with pytest.raises(SessionNotFound):
        store.record_token_stat(stat("nope", 100))
    store.create_session("s1")
    store.record_token_stat(stat("s1", 100))
    with store.factory.begin() as session:
        session.execute(delete(ChatSession).where(ChatSession.id == "s1"))
    assert store.token_stats("s1") == []


def test_a_reply_and_its_figures_are_one_commit(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gateway's turn writes its reply and the turn's figures together
    (``append_positioned(stat=...)``): both or neither."""
    store.create_session("s1", messages=[Message(role="user", content="q")])
    reply = Message(role="assistant", content="a")
    appended = store.append_positioned("s1", [reply], stat=stat("s1", 100))
    ((_id, seq),) = appended.rows
    assert seq == appended.session.last_seq == 2 and [
        r.total_tokens for r in store.token_stats("s1")
    ] == [100]
    with monkeypatch.context() as patch:

        def fails(*_args: object) -> int:
            raise DatabaseError("database error: the figures were not written")

        patch.setattr(sessions_module, "insert_token_stat", fails)
        with pytest.raises(DatabaseError):
            store.append_positioned("s1", [reply], stat=stat("s1", 200))
    assert [s.seq for s in store.load_history("s1")] == [1, 2]  # the reply rolled back too
    assert [r.total_tokens for r in store.token_stats("s1")] == [100]
    with pytest.raises(InvalidRequest):
        store.append_positioned("s1", [reply], stat=stat("s2", 100))
    with pytest.raises(SessionNotFound):
        store.append_positioned("nope", [], stat=stat("nope", 100))
