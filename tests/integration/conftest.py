"""Fixtures shared by the integration modules, over the suite's store, Redis namespace and fake
LLM (``tests/conftest.py``): the worker job's harness, which checks every published event
against the exported schemas (``test_worker_*.py``); the producers' context
(``test_producers_*.py``, ``test_worker_ingress.py``); the command line run in this process
(``command``); fresh databases to migrate (``test_migrations*.py``); and the database, store,
Redis names and processes of the tests that run real workers (``test_worker_process.py``,
``test_worker_metrics.py``)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
from sqlalchemy import Engine

from compaction import cli
from compaction.core.contract import parse_event
from compaction.producers.context import Producers
from compaction.service.events import EventPublisher
from compaction.service.settings import Settings
from compaction.store import Store, make_engine, make_sessionmaker
from compaction.store.migrate import upgrade
from compaction.worker.runtime import Runtime, install
from tests.integration.process_helpers import Processes, Server, worker_env
from tests.integration.worker_helpers import Harness, assert_valid
from tests.llm_server import FakeLLM
from tests.services import RedisNamespace, create_database, drop_database, empty_tables

# --- the worker job ---------------------------------------------------------------------------


@pytest.fixture
def h(
    store: Store,
    engine: Engine,
    redis_client: redis.Redis,
    redis_namespace: RedisNamespace,
    fake_llm: FakeLLM,
) -> Iterator[Harness]:
    harness = Harness(store, engine, redis_client, redis_namespace, fake_llm)
    yield harness
    install(None)
    # Every event a job published in this test matches the exported JSON Schemas
    # (docs/architecture.md, "Events").
    for wire in harness.wire_events():
        assert_valid(wire, "event.schema.json")
        assert_valid(wire, f"{wire['type']}.schema.json")
        assert parse_event(wire).to_wire() == wire


# --- the producers ----------------------------------------------------------------------------


@pytest.fixture
def ctx(
    postgres_url: str,
    fake_llm: FakeLLM,
    redis_namespace: RedisNamespace,
    redis_client: redis.Redis,
) -> Iterator[Producers]:
    """What a gateway holds, on the suite's PostgreSQL database (emptied) and the test's Redis
    names; the worker's runtime installed, so RQ's worker runs the job in this process."""
    engine = make_engine(postgres_url)
    empty_tables(engine)
    client = redis_client
    settings = Settings(
        database_url=postgres_url,
        **redis_namespace.settings(),
        context_window=4_000,
        llm_timeout_s=5,
        llm_max_retries=0,
        job_timeout_s=30,
        model_windows={"small-model": 2_000},
    )
    store = Store(make_sessionmaker(engine))
    fake_llm.add_channel(store, "aux", provider="openai", api_key="sk-test-producers")
    producers = Producers(settings=settings, store=store, redis=client)
    publisher = EventPublisher(client, prefix=settings.channel_prefix)
    install(Runtime(settings=settings, store=store, redis=client, publisher=publisher))
    yield producers
    install(None)
    engine.dispose()


# --- the command line ------------------------------------------------------------------------


@pytest.fixture
def command(
    engine: Engine,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    keep_logging: None,
) -> Callable[..., tuple[int, str, str]]:
    """``command("history", "s1", "--view", "full")``: the ``compaction`` command through
    ``cli.main`` on the ``engine`` fixture's database, with none of the caller's settings; its
    exit status, stdout and stderr."""
    for name in [n for n in os.environ if n.startswith("COMPACTION_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("COMPACTION_DATABASE_URL", engine.url.render_as_string(hide_password=False))
    monkeypatch.chdir(tmp_path)

    def call(*argv: str) -> tuple[int, str, str]:
        status = cli.main(list(argv))
        out, err = capsys.readouterr()
        return status, out, err

    return call


# --- the migrations ---------------------------------------------------------------------------


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


# --- real worker processes --------------------------------------------------------------------


@pytest.fixture(scope="module")
def process_database_url() -> Iterator[str]:
    """A PostgreSQL database of the module's own, for the workers it starts."""
    name, url = create_database()
    try:
        upgrade(url)
        yield url
    finally:
        drop_database(name)


@pytest.fixture(scope="module")
def process_store(process_database_url: str, llm_server: FakeLLM) -> Iterator[Store]:
    """The store of ``process_database_url``, with an auxiliary channel to the fake LLM."""
    factory = make_sessionmaker(process_database_url)
    store = Store(factory)
    llm_server.add_channel(store, "aux-fake", api_key="sk-test-worker-process-0123456789")
    yield store
    factory.kw["bind"].dispose()


@pytest.fixture
def rdb(redis_namespace: RedisNamespace, redis_client: redis.Redis) -> Server:
    return Server(redis_client, redis_namespace)


@pytest.fixture
def processes(
    tmp_path: Path, process_database_url: str, redis_namespace: RedisNamespace
) -> Iterator[Processes]:
    procs = Processes(tmp_path, worker_env(process_database_url, redis_namespace))
    try:
        yield procs
    finally:
        procs.close()
