"""``store.db.read_connection``: the threshold check's session read on a Core connection, in
autocommit on PostgreSQL without leaking it into the pool, never a connection the server
dropped, its driver errors turned into ``db_error``."""

from __future__ import annotations

import time

import psycopg
import pytest
from sqlalchemy import Engine, text
from sqlalchemy.orm import Session, sessionmaker

from compaction.core.errors import DatabaseError
from compaction.store import Store, db, make_sessionmaker
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


def terminate(postgres_url: str, pid: int) -> None:
    """End the backend ``pid`` and wait until it is gone (``pg_terminate_backend`` only signals
    it): the server has then closed the connection, as a restart does."""
    url = postgres_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        for _ in range(500):
            row = admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,))
            if row.fetchone() is None:
                return
            time.sleep(0.01)
    raise AssertionError(f"backend {pid} still there")


def backend_pid(factory: sessionmaker[Session]) -> int:
    with read_connection(factory) as connection:
        return int(connection.execute(text("SELECT pg_backend_pid()")).scalar_one())


def survives_a_terminated_backend(postgres_url: str) -> None:
    """A read after the pooled connection's backend was terminated answers, on a new one."""
    factory = make_sessionmaker(postgres_url)
    store = Store(factory)
    try:
        session_id = store.create_session(model="m")
        pid = backend_pid(factory)
        terminate(postgres_url, pid)
        assert store.get_session(session_id).model == "m"
        assert backend_pid(factory) != pid
    finally:
        factory.kw["bind"].dispose()


def test_get_session_survives_a_dropped_connection(postgres_url: str) -> None:
    """A server restart drops every pooled connection: the checkout sees the closed socket
    (without a ping: the connection was used a moment ago) and takes a new one."""
    survives_a_terminated_backend(postgres_url)


def test_a_long_idle_connection_is_pinged(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One idle past ``PING_IDLE_S`` (a middlebox may drop it without a word, so that its socket
    looks fine): the checkout's ping finds it dead and a new one is taken."""
    monkeypatch.setattr(db, "_readable", lambda _fd: False)  # a silent drop
    monkeypatch.setattr(db, "PING_IDLE_S", 0.0)
    survives_a_terminated_backend(postgres_url)


def test_a_failed_read_is_a_db_error(store: Store) -> None:
    with pytest.raises(DatabaseError) as err, read_connection(store.factory) as connection:
        connection.execute(text("SELECT secret FROM no_such_table"))
    assert err.value.code == "db_error"
