"""Migration 0006 on a database holding an agent, a channel, a session, its messages and a run,
SQLite and a real PostgreSQL (docs/architecture.md, "Tables"): every new column blank or false
(``autoCompact: on`` for users who touch nothing), bounded by its checks; the downgrade drops them
and the draft table, every row kept (SQLite copied no table: no ON DELETE action ran)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from alembic import command
from sqlalchemy import Engine, inspect, text
from sqlalchemy.exc import IntegrityError

from compaction.store.db import make_engine
from compaction.store.migrate import alembic_config, upgrade
from tests.integration.helpers import current_revision, differences, head_revision

NOW = "CURRENT_TIMESTAMP"
ROWS = (
    "INSERT INTO model_channel (id, name, provider, model, is_auxiliary, created_at) "
    f"VALUES (1, 'aux', 'openai', 'm', true, {NOW})",
    "INSERT INTO agent (id, auxiliary_model_channel_id, compaction_threshold_percent, "
    f"created_at) VALUES ('tuned', 1, 50, {NOW})",
    f"INSERT INTO chat_session (id, agent_id, created_at) VALUES ('s1', 'tuned', {NOW})",
    "INSERT INTO compaction_run (id, session_id, reason, status, finished_at) "
    f"VALUES (7, 's1', 'manual', 'succeeded', {NOW})",
    "INSERT INTO message (session_id, seq, role, content, pruned_run_id, created_at) "
    f"VALUES ('s1', 1, 'user', 'hi', 7, {NOW})",
)
STATE = (
    "SELECT id, auxiliary_model_channel_id, compaction_threshold_percent FROM agent",
    "SELECT id, agent_id FROM chat_session",
    "SELECT seq, content, pruned_run_id FROM message",
    "SELECT id, status FROM compaction_run",
)


@pytest.fixture
def at_0005(fresh_url: str) -> Iterator[Engine]:
    upgrade(fresh_url, "0005")
    engine = make_engine(fresh_url)
    with engine.begin() as conn:
        for row in ROWS:
            conn.execute(text(row))
    yield engine
    engine.dispose()


def state(engine: Engine) -> tuple[object, ...]:
    with engine.connect() as conn:
        return tuple(tuple(conn.execute(text(query)).all()) for query in STATE)


def columns(engine: Engine, table: str) -> set[str]:
    return {c["name"] for c in inspect(engine).get_columns(table)}


def test_upgrade_adds_blank_bounded_columns_and_downgrade_drops_them(
    at_0005: Engine, fresh_url: str
) -> None:
    before = state(at_0005)

    upgrade(fresh_url)

    assert current_revision(at_0005) == head_revision()
    assert differences(at_0005) == []
    assert state(at_0005) == before
    with at_0005.connect() as conn:
        agent = conn.execute(
            text("SELECT auto_compact, warn_percent, chat_channel_id FROM agent")
        ).one()
        assert tuple(agent) == (None, None, None)
        assert conn.execute(text("SELECT pinned FROM message")).scalar_one() in (False, 0)
        assert conn.execute(text("SELECT receipt, cost FROM compaction_run")).one() == (None, None)
        assert conn.execute(text("SELECT title FROM chat_session")).scalar_one() is None
    for bad in ("auto_compact = 'maybe'", "warn_percent = 95", "warn_percent = 0"):
        with pytest.raises(IntegrityError), at_0005.begin() as conn:
            conn.execute(text(f"UPDATE agent SET {bad}"))
    with at_0005.begin() as conn:
        conn.execute(text("UPDATE agent SET auto_compact = 'ask', warn_percent = 40"))

    command.downgrade(alembic_config(fresh_url), "0005")

    assert current_revision(at_0005) == "0005"
    assert "compaction_draft" not in inspect(at_0005).get_table_names()
    assert not {"auto_compact", "warn_percent", "chat_channel_id"} & columns(at_0005, "agent")
    assert "pinned" not in columns(at_0005, "message")
    assert state(at_0005) == before  # no table was copied: no ON DELETE action ran
    upgrade(fresh_url)
    assert differences(at_0005) == []
