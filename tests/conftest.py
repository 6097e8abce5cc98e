"""Fixtures shared by the suite. The store fixtures run every test against SQLite and against
a real PostgreSQL database created for the run; a test that uses Redis gets a key prefix and a
queue name of its own on the shared server (docs/architecture.md, "Tests").

Each test is marked by its folder (``FOLDERS``), and ``pytest`` with no path runs the fast
target: the ``unit`` tests, which need no service. ``pytest --full`` runs the whole suite; a
path (``pytest tests/integration``) or a marker expression (``-m integration``) runs what it
names."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
import structlog
from sqlalchemy import Engine

from compaction.store import Store, make_engine, make_sessionmaker
from compaction.store.migrate import upgrade
from tests.llm_server import FakeLLM, Reply, serve
from tests.services import (
    RedisNamespace,
    create_database,
    drop_database,
    empty_tables,
    fresh_namespace,
)

#: Each folder's markers: ``unit`` needs no service (a loopback fake model or a SQLite file of
#: the test's own is no service); ``integration`` needs real PostgreSQL and Redis, processes or
#: a browser. A test in no folder listed here is ``integration``, outside the fast target.
FOLDERS: dict[str, tuple[str, ...]] = {
    "tests/unit": ("unit",),
    "benchmarks/tests": ("unit",),
    "tests/integration": ("integration",),
    "tests/gateway": ("integration",),
    "tests/e2e": ("integration",),
    "tests/browser": ("integration", "browser"),
}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--full",
        action="store_true",
        help="run the whole suite (PostgreSQL, Redis, processes, browser), not the fast target",
    )


def folder_markers(path: Path) -> tuple[str, ...] | None:
    """The markers of the tests under ``path`` (relative to the repository's root); None for a
    path in no folder of ``FOLDERS``."""
    return next((m for folder, m in FOLDERS.items() if path.is_relative_to(folder)), None)


def fast_target(config: pytest.Config) -> bool:
    """``pytest`` with no path, no ``-m`` and no ``--full``: only the ``unit`` tests."""
    return (
        not config.getoption("full")
        and not config.getoption("markexpr")
        and config.args_source is pytest.Config.ArgsSource.TESTPATHS
    )


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """The fast target does not even import the modules of a folder it would deselect."""
    markers = folder_markers(collection_path.relative_to(config.rootpath))
    return True if fast_target(config) and markers and "unit" not in markers else None


@pytest.hookimpl(tryfirst=True)  # before ``-m`` selects by these markers
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        markers = folder_markers(item.path.relative_to(config.rootpath)) or ("integration",)
        for marker in markers:
            item.add_marker(marker)
    if fast_target(config):
        others = [item for item in items if item.get_closest_marker("unit") is None]
        config.hook.pytest_deselected(items=others)
        items[:] = [item for item in items if item.get_closest_marker("unit") is not None]


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
        empty_tables(engine)
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
