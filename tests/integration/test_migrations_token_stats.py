"""Migration 0004 (context_token_stat), SQLite and a real PostgreSQL: up from 0003 with the
data kept, rows written and gone with their session, down to 0003 dropping only the table, and
up again with models and migrations in agreement."""

from __future__ import annotations

from alembic import command
from sqlalchemy import inspect, text

from compaction.store.db import make_engine
from compaction.store.migrate import alembic_config, upgrade
from tests.integration.helpers import current_revision, differences, table_names

NOW = "CURRENT_TIMESTAMP"
ROW = (
    "INSERT INTO context_token_stat (session_id, created_at, tokens, total_tokens, decision) "
    f"VALUES ('s', {NOW}, '{{\"loop\": 5}}', 5, 'below_threshold')"
)


def test_0004_up_and_down(fresh_url: str) -> None:
    config = alembic_config(fresh_url)
    command.upgrade(config, "0003")
    engine = make_engine(fresh_url)
    try:
        with engine.begin() as conn:
            conn.execute(text(f"INSERT INTO chat_session (id, created_at) VALUES ('s', {NOW})"))
        assert "context_token_stat" not in table_names(engine)

        command.upgrade(config, "0004")
        assert current_revision(engine) == "0004"
        index = inspect(engine).get_indexes("context_token_stat")
        assert [tuple(i["column_names"]) for i in index] == [("session_id", "id")]
        with engine.begin() as conn:
            conn.execute(text(ROW))
            conn.execute(text(ROW))
            count = conn.execute(text("SELECT count(*) FROM context_token_stat")).scalar()
            assert count == 2
            conn.execute(text("DELETE FROM chat_session WHERE id = 's'"))
            count = conn.execute(text("SELECT count(*) FROM context_token_stat")).scalar()
            assert count == 0  # ON DELETE CASCADE
            conn.execute(text(f"INSERT INTO chat_session (id, created_at) VALUES ('s', {NOW})"))
            conn.execute(text(ROW))

        command.downgrade(config, "0003")
        assert current_revision(engine) == "0003"
        assert "context_token_stat" not in table_names(engine)
        with engine.connect() as conn:  # the rest is untouched
            assert conn.execute(text("SELECT id FROM chat_session")).scalars().all() == ["s"]

        upgrade(fresh_url)
        assert differences(engine) == []
    finally:
        engine.dispose()
