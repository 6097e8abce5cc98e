"""The Alembic migrations against fresh databases, SQLite and a real PostgreSQL
(docs/architecture.md, "Tables"): every table created, upgrading twice, the schema's defaults,
a clean downgrade and re-upgrade, nothing left behind once ``upgrade`` returns. The schema they
build: test_migrations_schema.py; the engine: test_store_db.py."""

from __future__ import annotations

import gc
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import psycopg
from alembic import command
from sqlalchemy import Engine, text
from sqlalchemy.engine import make_url

from compaction.store.db import make_engine
from compaction.store.migrate import alembic_config, upgrade
from tests.integration.helpers import (
    TABLES,
    current_revision,
    differences,
    head_revision,
    table_names,
)
from tests.services import POSTGRES_ADMIN_URL


def test_upgrade_creates_every_table_of_the_design(migrated: Engine) -> None:
    assert table_names(migrated) == TABLES
    assert current_revision(migrated) == head_revision() is not None


def test_upgrade_twice_is_a_no_op(fresh_url: str) -> None:
    upgrade(fresh_url)
    upgrade(fresh_url)
    engine = make_engine(fresh_url)
    try:
        assert table_names(engine) == TABLES
        assert differences(engine) == []
    finally:
        engine.dispose()


def test_server_defaults_fill_a_bare_row(migrated: Engine) -> None:
    """The seed's defaults live in the schema, not only in the models."""
    with migrated.begin() as conn:
        now = "CURRENT_TIMESTAMP"
        conn.execute(text(f"INSERT INTO agent (id, created_at) VALUES ('a', {now})"))
        conn.execute(
            text(
                "INSERT INTO model_channel (name, provider, model, created_at) "
                f"VALUES ('c', 'openai', 'm', {now})"
            )
        )
        conn.execute(text(f"INSERT INTO chat_session (id, created_at) VALUES ('s', {now})"))
        conn.execute(
            text(
                "INSERT INTO message (session_id, seq, role, content, created_at) "
                f"VALUES ('s', 1, 'user', 'hi', {now})"
            )
        )
        agent = conn.execute(
            text(
                "SELECT compaction_threshold_percent, compaction_protect_first_n, "
                "compaction_strategy, auxiliary_model_channel_id FROM agent"
            )
        ).one()
        channel = conn.execute(text("SELECT is_auxiliary FROM model_channel")).one()
        session = conn.execute(text("SELECT compaction_version, last_seq FROM chat_session")).one()
        message = conn.execute(
            text(
                "SELECT seq_minor, is_compaction_summary, compacted_at, compacted_into_id, "
                "pruned_at FROM message"
            )
        ).one()
    # a blank threshold and protected head: the system settings apply (migration 0003)
    assert tuple(agent) == (None, None, "lossy", None)
    assert not channel[0]
    assert tuple(session) == (0, 0)
    assert tuple(message) == (0, False, None, None, None)


def test_downgrade_to_base_drops_everything_and_upgrade_works_again(fresh_url: str) -> None:
    upgrade(fresh_url)
    command.downgrade(alembic_config(fresh_url), "base")
    engine = make_engine(fresh_url)
    try:
        assert table_names(engine) == set()
        assert current_revision(engine) is None
        with engine.connect() as conn:
            indexes = (
                conn.execute(text("SELECT name FROM sqlite_master WHERE type = 'index'"))
                if engine.dialect.name == "sqlite"
                else conn.execute(
                    text("SELECT indexname FROM pg_indexes WHERE schemaname = 'public'")
                )
            ).scalars()
            assert [i for i in indexes if "alembic" not in i] == []

        upgrade(fresh_url)
        assert table_names(engine) == TABLES
        assert current_revision(engine) == head_revision()
        assert differences(engine) == []
        with engine.begin() as conn:
            conn.execute(
                text("INSERT INTO chat_session (id, created_at) VALUES ('s', CURRENT_TIMESTAMP)")
            )
    finally:
        engine.dispose()


def test_upgrade_leaves_nothing_behind_once_it_returns(fresh_url: str, tmp_path: Path) -> None:
    """What the suite's SQLite template relies on: once ``upgrade`` returns, the schema is in
    the database file itself (a copy of it has the tables), and no connection is left open."""
    gc.disable()  # connections must be closed by upgrade, not by a later garbage collection
    try:
        upgrade(fresh_url)
        if fresh_url.startswith("sqlite"):
            copy = tmp_path / "copy.db"
            shutil.copy(make_url(fresh_url).database or "", copy)
            with closing(sqlite3.connect(copy)) as conn:
                names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            assert names >= TABLES
        else:
            database = make_url(fresh_url).database
            with psycopg.connect(POSTGRES_ADMIN_URL, autocommit=True) as conn:
                row = conn.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", (database,)
                ).fetchone()
            assert row is not None and row[0] == 0
    finally:
        gc.enable()
