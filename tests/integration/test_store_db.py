"""The store's engine (store/db.py): SQLite's pragmas on every connection, its foreign keys
enforced, PostgreSQL through psycopg 3."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from compaction.store.db import SQLITE_BUSY_TIMEOUT_MS, make_engine, normalize_url
from compaction.store.migrate import upgrade


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
