"""The Alembic migrations against fresh databases, SQLite and a real PostgreSQL (DESIGN §5, §9):
every table, column and index of the seed, models and migrations in agreement, a clean
downgrade and re-upgrade; and the SQLite engine's pragmas."""

from __future__ import annotations

import gc
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import psycopg
import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, inspect, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError

from store.db import SQLITE_BUSY_TIMEOUT_MS, make_engine, normalize_url
from store.migrate import alembic_config, upgrade
from store.models import Base
from tests.services import POSTGRES_ADMIN_URL, create_database, drop_database

pytestmark = pytest.mark.integration

TABLES = {
    "agent",
    "chat_session",
    "message",
    "model_channel",
    "dict_type",
    "dict_info",
    "compaction_run",
}

COLUMNS = {
    "message": {
        "id",
        "session_id",
        "seq",
        "role",
        "content",
        "tool_calls",
        "tool_call_id",
        "metadata",
        "created_at",
        "compacted_at",
        "compacted_into_id",
        "is_compaction_summary",
        "pruned_at",
    },
    "agent": {
        "id",
        "auxiliary_model_channel_id",
        "compaction_strategy",
        "compaction_threshold_percent",
        "compaction_protect_first_n",
    },
    "model_channel": {"id", "name", "provider", "model", "is_auxiliary"},
    "chat_session": {"id", "agent_id", "compaction_version"},
    "dict_type": {"id", "name", "key"},
    "dict_info": {"id", "type_id", "name", "value"},
    "compaction_run": {
        "id",
        "session_id",
        "request_id",
        "reason",
        "status",
        "code",
        "tokens_before",
        "tokens_after",
        "removed_count",
        "pruned_count",
        "model",
        "input_tokens",
        "output_tokens",
        "durations",
        "worker",
    },
}

#: nullable or not, as the seed's tables say (§5.1–5.3)
NULLABLE = {
    ("message", "compacted_at"): True,
    ("message", "compacted_into_id"): True,
    ("message", "is_compaction_summary"): False,
    ("message", "pruned_at"): True,
    ("message", "seq"): False,
    ("agent", "auxiliary_model_channel_id"): True,
    ("agent", "compaction_strategy"): False,
    ("agent", "compaction_threshold_percent"): False,
    ("agent", "compaction_protect_first_n"): False,
    ("model_channel", "is_auxiliary"): False,
}

INDEXES = {
    ("session_id", "compacted_at"),
    ("session_id", "is_compaction_summary"),
}

FOREIGN_KEYS = {
    ("message", ("session_id",), "chat_session", ("id",)),
    ("message", ("compacted_into_id",), "message", ("id",)),
    ("agent", ("auxiliary_model_channel_id",), "model_channel", ("id",)),
    ("chat_session", ("agent_id",), "agent", ("id",)),
    ("dict_info", ("type_id",), "dict_type", ("id",)),
    ("compaction_run", ("session_id",), "chat_session", ("id",)),
}

CHECKS = {
    "agent": {"ck_agent_threshold", "ck_agent_protect", "ck_agent_strategy"},
    "model_channel": {"ck_model_channel_provider"},
}


@pytest.fixture(params=["sqlite", "postgresql"])
def fresh_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database: a new SQLite file, or a new PostgreSQL database dropped after."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'fresh.db'}"
        return
    name, url = create_database()
    try:
        yield url
    finally:
        drop_database(name)


@pytest.fixture
def migrated(fresh_url: str) -> Iterator[Engine]:
    upgrade(fresh_url)
    engine = make_engine(fresh_url)
    yield engine
    engine.dispose()


def table_names(engine: Engine) -> set[str]:
    return set(inspect(engine).get_table_names()) - {"alembic_version"}


def differences(engine: Engine) -> list[Any]:
    with engine.connect() as conn:
        context = MigrationContext.configure(
            conn, opts={"compare_type": True, "compare_server_default": True}
        )
        return list(compare_metadata(context, Base.metadata))


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()


def test_upgrade_creates_every_table_of_the_design(migrated: Engine) -> None:
    assert table_names(migrated) == TABLES
    assert current_revision(migrated) == head_revision() is not None


def test_the_tables_have_the_seeds_columns(migrated: Engine) -> None:
    inspector = inspect(migrated)
    for table, expected in COLUMNS.items():
        columns = {c["name"] for c in inspector.get_columns(table)}
        assert expected <= columns, f"{table} lacks {sorted(expected - columns)}"
    for (table, column), nullable in NULLABLE.items():
        (info,) = [c for c in inspector.get_columns(table) if c["name"] == column]
        assert info["nullable"] is nullable, f"{table}.{column}"


def test_the_message_indexes_exist(migrated: Engine) -> None:
    indexes = {tuple(i["column_names"]) for i in inspect(migrated).get_indexes("message")}
    assert indexes >= INDEXES


def test_the_foreign_keys_and_checks_exist(migrated: Engine) -> None:
    inspector = inspect(migrated)
    found = {
        (
            table,
            tuple(fk["constrained_columns"]),
            fk["referred_table"],
            tuple(fk["referred_columns"]),
        )
        for table in TABLES
        for fk in inspector.get_foreign_keys(table)
    }
    assert found >= FOREIGN_KEYS
    for table, names in CHECKS.items():
        assert {c["name"] for c in inspector.get_check_constraints(table)} >= names


def test_models_and_migrations_agree(migrated: Engine) -> None:
    assert differences(migrated) == []


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
    assert tuple(agent) == (70, 3, "lossy", None)
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


# --- the engine ---------------------------------------------------------------------------------


def test_sqlite_engine_sets_wal_foreign_keys_and_busy_timeout(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'pragmas.db'}")
    try:
        # every pooled connection gets them, not only the first
        with engine.connect() as first, engine.connect() as second:
            for conn in (first, second):
                assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
                assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
                assert (
                    conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == SQLITE_BUSY_TIMEOUT_MS
                )
        assert SQLITE_BUSY_TIMEOUT_MS >= 1_000
    finally:
        engine.dispose()


def test_sqlite_foreign_keys_are_enforced(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fk.db'}"
    upgrade(url)
    engine = make_engine(url)
    try:
        with pytest.raises(IntegrityError), engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO message (session_id, seq, role, content, created_at) "
                    "VALUES ('no-such-session', 1, 'user', 'hi', CURRENT_TIMESTAMP)"
                )
            )
    finally:
        engine.dispose()


def test_postgresql_urls_use_psycopg_3() -> None:
    assert (
        normalize_url("postgresql://u:p%40ss@h:5432/db")
        == "postgresql+psycopg://u:p%40ss@h:5432/db"
    )
    assert normalize_url("postgres://h/db").startswith("postgresql+psycopg://")
    assert normalize_url("sqlite:///x.db") == "sqlite:///x.db"
    engine = make_engine("postgresql://127.0.0.1:5432/test")
    try:
        assert engine.dialect.driver == "psycopg"
    finally:
        engine.dispose()
