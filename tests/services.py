"""Real services for the integration tests (DESIGN §9): PostgreSQL and Redis on this machine.

A missing service is a test failure with the command that starts it, never a skip.
"""

from __future__ import annotations

import os
import uuid

import psycopg
import pytest

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
