"""Engines and sessionmakers (docs/architecture.md, "Tables"): PostgreSQL through psycopg 3 in
production, a SQLite file as the embedded default.

SQLite gets WAL, foreign keys and a busy timeout, and pysqlite's own transaction handling is
replaced by explicit ``BEGIN`` statements: a write transaction (``write_session``) starts with
``BEGIN IMMEDIATE`` so two writers queue on the lock instead of failing when a read lock cannot
be upgraded.
"""

from __future__ import annotations

import select
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import InvalidatePoolError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from compaction.core.errors import DatabaseError

SQLITE_BUSY_TIMEOUT_MS = 30_000
_BEGIN = "sqlite_begin"


def normalize_url(url: str) -> str:
    """Plain ``postgresql://`` URLs use psycopg 3 (the stack's driver), not psycopg2."""
    parsed = make_url(url)
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed.render_as_string(hide_password=False)


def make_engine(url: str, **kwargs: Any) -> Engine:
    url = normalize_url(url)
    # Statement parameters (message contents, a channel's key) never go into error text.
    kwargs.setdefault("hide_parameters", True)
    if make_url(url).get_backend_name() != "sqlite":
        engine = create_engine(url, **kwargs)
        if not kwargs.get("pool_pre_ping"):
            _check_liveness(engine)
        return engine
    engine = create_engine(url, **kwargs)

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we emit BEGIN ourselves
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection: Any) -> None:
        mode = connection.get_execution_options().get(_BEGIN, "")
        connection.exec_driver_sql(f"BEGIN {mode}".strip())

    return engine


#: a pooled connection idle longer than this is pinged when checked out (a middlebox may have
#: dropped it without a word); one used more recently is checked without a round trip
PING_IDLE_S = 5.0
_RETURNED = "returned_at"


def _check_liveness(engine: Engine) -> None:
    """Never hand out a connection the server dropped, without ``pool_pre_ping``'s round trip
    on every checkout (ten per chat turn, docs/benchmarks.md, "Overheads"). A server that closed
    a connection (a restart, ``pg_terminate_backend``, its idle timeout) has sent its goodbye,
    so the idle socket reads ready: we never ``LISTEN``, and nothing else comes unasked. A
    connection idle past ``PING_IDLE_S`` is pinged as well. Either failure drops the pool's
    connections and the checkout takes a new one (SQLAlchemy's "custom pessimistic ping")."""

    @event.listens_for(engine, "connect")
    @event.listens_for(engine, "checkin")
    def _returned(_dbapi_connection: Any, record: Any) -> None:
        if record is not None:
            record.info[_RETURNED] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _checkout(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        if dbapi_connection.closed or _readable(dbapi_connection.fileno()):
            raise InvalidatePoolError("the server closed the connection")
        if time.monotonic() - record.info.get(_RETURNED, 0.0) > PING_IDLE_S:
            try:
                engine.dialect.do_ping(dbapi_connection)
            except engine.dialect.loaded_dbapi.Error as err:
                raise InvalidatePoolError(f"ping failed: {type(err).__name__}") from None


def _readable(fd: int) -> bool:
    """Whether ``fd`` has something to read (or is closed), without waiting."""
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        return bool(poller.poll(0))
    return bool(select.select([fd], [], [], 0)[0])


def make_sessionmaker(engine_or_url: Engine | str) -> sessionmaker[Session]:
    engine = make_engine(engine_or_url) if isinstance(engine_or_url, str) else engine_or_url
    return sessionmaker(engine, expire_on_commit=False)


@contextmanager
def write_session(factory: sessionmaker[Session]) -> Iterator[Session]:
    """A session in one write transaction: committed on success, rolled back on any error
    (a driver error becomes ``DatabaseError``, code ``db_error``). On SQLite the transaction
    takes the write lock up front."""
    with _database_errors(), factory() as session:
        session.connection(execution_options={_BEGIN: "IMMEDIATE"})
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise


@contextmanager
def write_connection(factory: sessionmaker[Session]) -> Iterator[Connection]:
    """``write_session`` on a Core connection: one transaction, committed on success, rolled
    back on any error, ``db_error`` for a driver error, the write lock up front on SQLite. For
    the few plain statements of a chat turn's writes: no ORM session and unit of work around
    them (docs/benchmarks.md, "Overheads")."""
    engine: Engine = factory.kw["bind"]
    with _database_errors(), engine.connect() as connection:
        connection.execution_options(**{_BEGIN: "IMMEDIATE"})
        with connection.begin():
            yield connection


#: reads on a server database run in autocommit: no BEGIN and ROLLBACK round trips around
#: what is usually one SELECT (the per-turn threshold check's hot path)
_AUTOCOMMIT = {"isolation_level": "AUTOCOMMIT"}


@contextmanager
def read_session(factory: sessionmaker[Session]) -> Iterator[Session]:
    """A session for reads, in autocommit on a server database."""
    with _database_errors(), factory() as session:
        bind = session.get_bind()
        if bind.dialect.name != "sqlite":
            session.connection(execution_options=_AUTOCOMMIT)
        yield session


@contextmanager
def read_connection(factory: sessionmaker[Session]) -> Iterator[Connection]:
    """A Core connection for reads, in autocommit on a server database: no ORM session around
    a one-row SELECT the threshold check makes before every model call (docs/architecture.md,
    "The job"). Checked out of the same pool, with its liveness ping."""
    engine: Engine = factory.kw["bind"]
    with _database_errors(), engine.connect() as connection:
        if engine.dialect.name != "sqlite":
            connection.execution_options(**_AUTOCOMMIT)
        yield connection


@contextmanager
def _database_errors() -> Iterator[None]:
    try:
        yield
    except SQLAlchemyError as err:
        raise database_error(getattr(err, "orig", None) or err) from None


def database_error(err: BaseException) -> DatabaseError:
    """``db_error`` with the driver's first line only: no statement, no parameters. Raise it
    unchained: the driver's detail can quote a whole row, a channel's key with it."""
    lines = str(err).strip().splitlines()
    return DatabaseError(f"database error: {lines[0] if lines else type(err).__name__}")


class Repository:
    """Base of the store's parts: each holds the sessionmaker it was given (no global engine)."""

    def __init__(self, factory: sessionmaker[Session]) -> None:
        self.factory = factory
