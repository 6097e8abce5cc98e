"""Fixtures of the worker-job tests: the harness over the suite's store, Redis namespace and fake
LLM (``tests/conftest.py``), which checks every published event against the exported
schemas."""

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
from tests.llm_server import FakeLLM
from tests.services import RedisNamespace
from worker.runtime import install


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
    # Every event a job published in this test matches the exported JSON Schemas (DESIGN §6).
    for wire in harness.wire_events():
        assert_valid(wire, "event.schema.json")
        assert_valid(wire, f"{wire['type']}.schema.json")
        assert parse_event(wire).to_wire() == wire
