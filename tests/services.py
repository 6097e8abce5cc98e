"""Real services for the integration tests (DESIGN §9): PostgreSQL and Redis on this machine.

A missing service is a test failure with the command that starts it, never a skip.
"""

from __future__ import annotations

import os
import subprocess
import time
import uuid

import psycopg
import pytest
import redis

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
        conn.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
    base = POSTGRES_ADMIN_URL.rsplit("/", 1)[0]
    return name, f"{base}/{name}"


def drop_database(name: str) -> None:
    with admin_connection() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')  # type: ignore[arg-type]


class PrivateRedis:
    """A redis-server of the test's own on a free port, that a test may stop and restart
    (DESIGN §9: real services; the machine's shared Redis is never restarted)."""

    def __init__(self) -> None:
        import socket

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
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
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                redis.Redis(port=self.port, socket_connect_timeout=0.2).ping()
                return
            except redis.ConnectionError:
                time.sleep(0.05)
        pytest.fail(f"redis-server did not start on port {self.port}", pytrace=False)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()
