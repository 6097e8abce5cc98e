"""Fixtures of the gateway's tests: the real app served by uvicorn (in a thread, on a free port)
against a PostgreSQL database of the module's own (emptied for each test) and the test's Redis
names, with a bearer token; tests talk to it over HTTP (docs/architecture.md, "Tests").

``gateway`` is the served app; a module changes what it is built with by overriding
``gateway_settings`` (``Settings`` overrides) or ``gateway_options`` (``GatewayOptions``).
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
import redis
import uvicorn
from pydantic import SecretStr
from rq import SimpleWorker
from rq.serializers import JSONSerializer

from compaction.gateway import Resources, create_app
from compaction.gateway.resources import GatewayOptions
from compaction.producers.context import Producers
from compaction.service.events import EventPublisher
from compaction.service.queue import compaction_queue
from compaction.service.settings import Settings
from compaction.store import ChannelConfig, Store, make_engine, make_sessionmaker
from compaction.store.migrate import upgrade
from compaction.worker.runtime import Runtime, install
from tests.llm_server import FakeLLM
from tests.services import RedisNamespace, create_database, drop_database, empty_tables, free_port


@dataclass
class Gateway:
    """A served gateway: ``url`` (``http://127.0.0.1:PORT``), its ``token``, the
    ``resources`` it was built with, and ``client``, an ``httpx.Client`` on ``url`` that sends
    the bearer token."""

    url: str
    token: str
    resources: Resources
    client: httpx.Client
    namespace: RedisNamespace
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def store(self) -> Store:
        return self.resources.producers.store

    @property
    def ws_url(self) -> str:
        return "ws" + self.url.removeprefix("http")

    def anonymous(self, url: str | None = None) -> httpx.Client:
        """A client without the token, of this server or the one at ``url`` (close it, or use
        ``with``)."""
        return httpx.Client(base_url=url or self.url, timeout=30)

    def drain(self) -> None:
        """Run every queued compaction job with RQ's SimpleWorker in this process (burst), on
        the worker runtime the fixture installed (the same database and Redis names)."""
        producers = self.resources.producers
        queue = compaction_queue(producers.redis, producers.settings.queue_name)
        SimpleWorker([queue], connection=producers.redis, serializer=JSONSerializer).work(
            burst=True
        )

    def auxiliary(self, fake: FakeLLM, name: str = "aux-fake") -> ChannelConfig:
        """The store's default auxiliary channel, answered by the fake LLM."""
        return fake.add_channel(self.store, name, api_key="sk-test-gateway-0123456789abcdef")


@pytest.fixture(scope="module")
def gateway_database() -> Iterator[str]:
    """A PostgreSQL database of the module's own, migrated."""
    name, url = create_database()
    try:
        upgrade(url)
        yield url
    finally:
        drop_database(name)


@pytest.fixture
def gateway_settings() -> dict[str, Any]:
    """``Settings`` overrides of the served gateway (a module may override this fixture)."""
    return {}


@pytest.fixture
def gateway_options() -> GatewayOptions:
    """The gateway's options; the token is replaced by a fresh one unless a module sets
    ``token=None`` in an override of this fixture."""
    return GatewayOptions(token=SecretStr("to-be-replaced"))


@pytest.fixture
def gateway(
    gateway_database: str,
    redis_namespace: RedisNamespace,
    redis_client: redis.Redis,
    gateway_settings: dict[str, Any],
    gateway_options: GatewayOptions,
) -> Iterator[Gateway]:
    engine = make_engine(gateway_database)
    empty_tables(engine)
    settings = Settings(
        database_url=gateway_database,
        **{**redis_namespace.settings(), "llm_timeout_s": 5, "llm_max_retries": 0},
        **gateway_settings,
    )
    store = Store(make_sessionmaker(engine))
    token = secrets.token_urlsafe(24)
    if gateway_options.token is not None:
        gateway_options.token = SecretStr(token)
    resources = Resources(
        settings=settings,
        producers=Producers(settings=settings, store=store, redis=redis_client),
        options=gateway_options,
    )
    publisher = EventPublisher(redis_client, prefix=settings.channel_prefix)
    install(Runtime(settings=settings, store=store, redis=redis_client, publisher=publisher))
    try:
        with (
            serve(resources) as url,
            httpx.Client(
                base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30
            ) as client,
        ):
            yield Gateway(url, token, resources, client, redis_namespace)
    finally:
        install(None)
        engine.dispose()


class _Server(uvicorn.Server):
    def install_signal_handlers(self) -> None:  # the test process keeps its own
        pass


def serve(resources: Resources) -> _Serving:
    return _Serving(resources)


class _Serving:
    """``create_app(resources)`` under uvicorn in a thread on a free port, for a ``with``."""

    def __init__(self, resources: Resources) -> None:
        config = uvicorn.Config(
            create_app(resources), host="127.0.0.1", port=free_port(), log_level="warning"
        )
        self.server = _Server(config)
        self.url = f"http://127.0.0.1:{config.port}"
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        started = threading.Event()
        while not self.server.started:
            if not self.thread.is_alive():
                pytest.fail("the gateway did not start (see the log above)", pytrace=False)
            started.wait(0.02)
        return self.url

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
