"""``store.db.read_connection``: the threshold check's session read on a Core connection, in
autocommit on PostgreSQL without leaking it into the pool, still pinged before use, its driver
errors turned into ``db_error``."""

from __future__ import annotations

import psycopg
import pytest
from sqlalchemy import Engine, text

from compaction.core.errors import DatabaseError
from compaction.store import Store, make_sessionmaker
from compaction.store.db import read_connection


def test_reads_run_in_autocommit_and_the_pool_gets_its_transactions_back(
    postgres_url: str,
) -> None:
    factory = make_sessionmaker(postgres_url)
    engine: Engine = factory.kw["bind"]
    try:
        with read_connection(factory) as connection:
            assert connection.connection.dbapi_connection.autocommit  # type: ignore[union-attr]
            pid = connection.execute(text("SELECT pg_backend_pid()")).scalar()
        with engine.connect() as connection:  # the same pooled connection, transactional again
            assert connection.execute(text("SELECT pg_backend_pid()")).scalar() == pid
            assert not connection.connection.dbapi_connection.autocommit  # type: ignore[union-attr]
    finally:
        engine.dispose()


def test_get_session_survives_a_dropped_connection(postgres_url: str) -> None:
    """A server restart drops every pooled connection: the checkout's ping replaces it."""
    factory = make_sessionmaker(postgres_url)
    store = Store(factory)
    try:
        session_id = store.create_session(model="m")
        with read_connection(factory) as connection:
            pid = connection.execute(text("SELECT pg_backend_pid()")).scalar()
        url = postgres_url.replace("postgresql+psycopg://", "postgresql://")
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        assert store.get_session(session_id).model == "m"
    finally:
        factory.kw["bind"].dispose()


def test_a_failed_read_is_a_db_error(store: Store) -> None:
    with pytest.raises(DatabaseError) as err, read_connection(store.factory) as connection:
        connection.execute(text("SELECT secret FROM no_such_table"))
    assert err.value.code == "db_error"
