"""Fixtures shared by the suite. The store fixtures run every test against SQLite and against
a real PostgreSQL database created for the run; a test that uses Redis gets a key prefix and a
queue name of its own on the shared server (docs/architecture.md, "Tests")."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
import structlog
from sqlalchemy import Engine, text

from compaction.store import Store, make_engine, make_sessionmaker
from compaction.store.migrate import upgrade
from compaction.store.models import Base
from tests.llm_server import FakeLLM, Reply, serve
from tests.services import RedisNamespace, create_database, drop_database, fresh_namespace


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    name, url = create_database()
    upgrade(url)
    yield url
    drop_database(name)


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated SQLite file, copied for each test (migrating each time would be slow)."""
    path = tmp_path_factory.mktemp("sqlite") / "template.db"
    upgrade(f"sqlite:///{path}")
    return path


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(
    request: pytest.FixtureRequest, tmp_path: Path, sqlite_template: Path
) -> Iterator[Engine]:
    if request.param == "sqlite":
        path = tmp_path / "store.db"
        shutil.copy(sqlite_template, path)
        engine = make_engine(f"sqlite:///{path}")
    else:
        engine = make_engine(request.getfixturevalue("postgres_url"))
        tables = ", ".join(t.name for t in Base.metadata.sorted_tables)
        with engine.begin() as conn:
            conn.execute(text(f"TRUNCATE {tables} RESTART IDENTITY CASCADE"))
    yield engine
    engine.dispose()


@pytest.fixture
def store(engine: Engine) -> Store:
    return Store(make_sessionmaker(engine))


@pytest.fixture
def redis_namespace() -> Iterator[RedisNamespace]:
    with fresh_namespace() as namespace:
        yield namespace


@pytest.fixture
def redis_client(redis_namespace: RedisNamespace) -> Iterator[redis.Redis]:
    """A client of the shared Redis; the test's keys are its namespace's
    (``redis_namespace``), deleted afterwards."""
    client = redis_namespace.client()
    yield client
    client.close()


@pytest.fixture
def keep_logging() -> Iterator[None]:
    """A command run in this process (``cli.main``) configures logging for the process: its
    handler writes to the stderr of that moment. Undone after the test."""
    root = logging.getLogger()
    handlers, level, config = root.handlers[:], root.level, structlog.get_config()
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    structlog.configure(**config)


@pytest.fixture(scope="session")
def llm_server() -> Iterator[FakeLLM]:
    """The fake auxiliary model (``tests/llm_server.py``), one loopback server for the run;
    what a module builds once (a channel, a worker process) points at it."""
    with serve() as fake:
        yield fake


@pytest.fixture
def fake_llm(llm_server: FakeLLM) -> FakeLLM:
    """The same server for one test: no request recorded yet, every request answered with the
    default summary until the test scripts other replies."""
    llm_server.script(Reply())
    return llm_server
