"""Real services for the integration tests (docs/architecture.md, "Tests"): PostgreSQL and Redis
on this machine.

A missing service is a test failure with the command that starts it, never a skip. Several test
runs may share the machine at once (two clones, two pytest): each run gets databases of its own
and, on the shared Redis, a key prefix and a queue name of its own (``RedisNamespace``).
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast

import psycopg
import pytest
import redis
from psycopg import sql
from sqlalchemy import Engine, text

from compaction.store.models import Base
from tests.namespace import RedisNamespace as Namespace
from tests.namespace import scoped

REDIS_URL = os.environ.get("COMPACTION_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
POSTGRES_ADMIN_URL = os.environ.get(
    "COMPACTION_TEST_POSTGRES_URL", "postgresql://127.0.0.1:5432/test"
)
START_POSTGRES = "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start"


def admin_connection() -> psycopg.Connection[tuple[object, ...]]:
    try:
        return psycopg.connect(POSTGRES_ADMIN_URL, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as err:
        pytest.fail(
            f"PostgreSQL is not reachable at {POSTGRES_ADMIN_URL} ({err}); start it: "
            f"{START_POSTGRES}",
            pytrace=False,
        )


def create_database() -> tuple[str, str]:
    """A fresh database for this test run; returns (name, SQLAlchemy URL)."""
    name = f"compaction_test_{uuid.uuid4().hex[:10]}"
    with admin_connection() as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    base = POSTGRES_ADMIN_URL.rsplit("/", 1)[0]
    return name, f"{base}/{name}"


def drop_database(name: str) -> None:
    with admin_connection() as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


def empty_tables(engine: Engine) -> None:
    """Every table of the models emptied and its ids counted from 1 again, in one transaction.
    DELETE and ``setval``, not TRUNCATE: TRUNCATE gives every table and index new files, ~0.13 s
    a test on this machine's disk against ~5 ms (the store and gateway fixtures run it for
    every test on PostgreSQL)."""
    with engine.begin() as conn:
        for table in reversed(Base.metadata.sorted_tables):  # who refers before what it refers to
            conn.execute(table.delete())
        sequences = conn.execute(
            text("SELECT sequencename FROM pg_sequences WHERE schemaname = current_schema()")
        ).scalars()
        restarts = [f"setval({sql.Literal(name).as_string()}, 1, false)" for name in sequences]
        if restarts:
            conn.execute(text("SELECT " + ", ".join(restarts)))


#: a stream entry as the suite's clients read it: its id and fields, bytes (no decoding)
Entry = tuple[bytes, dict[bytes, bytes]]


def stream_entries(client: redis.Redis, stream: str) -> list[Entry]:
    """XRANGE of ``stream``, typed as the suite's clients read it (redis-py types a reply as str
    or bytes, or an awaitable of them)."""
    return cast(list[Entry], client.xrange(stream))


def free_port() -> int:
    """A TCP port on the loopback that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PrivateRedis:
    """A redis-server of the test's own on a free port, that a test may stop and restart,
    empty each time (real services; the machine's shared Redis is never restarted)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                redis.Redis(port=self.port, socket_connect_timeout=0.2).ping()
                return
            except redis.ConnectionError:
                time.sleep(0.05)
        pytest.fail(f"redis-server did not start on port {self.port}", pytrace=False)

    def stop(self) -> int:
        """Its exit status (0: it shut down cleanly); 0 when it was not running."""
        if self.process is None:
            return 0
        self.process.terminate()
        status = self.process.wait(timeout=10)
        self.process = None
        return status

    def restart(self) -> None:
        self.stop()
        self.start()


@dataclass(frozen=True)
class RedisNamespace(Namespace):
    """A namespace on the suite's Redis (``tests/namespace.py``): a random key prefix and
    queue name, so concurrent test runs never see each other's keys; an unreachable Redis fails
    the test with the command that starts it."""

    url: str = REDIS_URL

    def client(self, **options: Any) -> redis.Redis:
        try:
            return super().client(**options)
        except redis.ConnectionError as err:
            pytest.fail(
                f"Redis is not reachable at {self.url} ({err}); start it: redis-server",
                pytrace=False,
            )


@contextmanager
def fresh_namespace(url: str = REDIS_URL) -> Iterator[RedisNamespace]:
    """A new namespace on the Redis at ``url``, cleared when the block ends."""
    namespace = RedisNamespace.fresh(url)
    with scoped(namespace):
        yield namespace
