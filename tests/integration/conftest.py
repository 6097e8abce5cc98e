"""Fixtures of the worker-job tests: the fake providers' server, a Redis namespace per test,
and the harness that checks every published event against the exported schemas."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis
from sqlalchemy import Engine

from compaction.contract import (
    parse_event,
)
from store import Store
from tests.integration.worker_helpers import Harness, assert_valid
from tests.llm_server import FakeLLM, Reply, serve
from tests.services import RedisNamespace
from worker.runtime import install


@pytest.fixture(scope="session")
def fake_llm() -> Iterator[FakeLLM]:
    with serve() as fake:
        yield fake


@pytest.fixture
def h(
    store: Store,
    engine: Engine,
    redis_client: redis.Redis,
    redis_namespace: RedisNamespace,
    fake_llm: FakeLLM,
) -> Iterator[Harness]:
    fake_llm.script(Reply())
    harness = Harness(store, engine, redis_client, redis_namespace, fake_llm)
    yield harness
    install(None)
    # Every event a job published in this test matches the exported JSON Schemas (DESIGN §6).
    for wire in harness.wire_events():
        assert_valid(wire, "event.schema.json")
        assert_valid(wire, f"{wire['type']}.schema.json")
        assert parse_event(wire).to_wire() == wire
