"""When the database or Redis is away (docs/architecture.md, "The gateway"): 503 with the JSON
error shape and its code, no credential of the URLs in the answer; what needs only the other
service still answers."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import redis
from pydantic import SecretStr

from compaction.gateway import Resources
from compaction.gateway.resources import GatewayOptions
from compaction.producers.context import Producers
from compaction.service.settings import Settings
from compaction.store import Store, make_sessionmaker
from tests.gateway.api_helpers import forty
from tests.gateway.conftest import Gateway, serve
from tests.services import free_port

TOKEN = "failures-token-0123456789"


@contextmanager
def served(settings: Settings) -> Iterator[httpx.Client]:
    producers = Producers(
        settings=settings,
        store=Store(make_sessionmaker(settings.database_url)),
        redis=redis.Redis.from_url(settings.redis_url, socket_connect_timeout=1),
    )
    options = GatewayOptions(token=SecretStr(TOKEN))
    with (
        serve(Resources(settings=settings, producers=producers, options=options)) as url,
        httpx.Client(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}) as client,
    ):
        yield client


def test_a_database_that_is_away_is_503_db_error(gateway: Gateway) -> None:
    settings = gateway.resources.settings.model_copy(
        update={"database_url": "postgresql://compaction:hunter2@127.0.0.1:1/nothing"}
    )
    with served(settings) as client:
        answers = [
            client.get("/api/sessions"),
            client.get("/api/sessions/s1/history"),
            client.post("/api/sessions/s1/import", json=forty()[:2]),
            client.get("/api/channels"),
        ]
    for answer in answers:
        assert answer.status_code == 503, answer.text
        error = answer.json()["error"]
        assert error["code"] == "db_error" and error["message"].startswith("database error: ")
        assert "hunter2" not in answer.text


def test_a_redis_that_is_away_is_503_redis(gateway: Gateway) -> None:
    gateway.client.post("/api/sessions/s1/import", json=forty()).raise_for_status()
    away = f"redis://:hunter2@127.0.0.1:{free_port()}/0"
    settings = gateway.resources.settings.model_copy(update={"redis_url": away})
    with served(settings) as client:
        compact = client.post("/api/sessions/s1/compact", json={})
        history = client.get("/api/sessions/s1/history")  # the database alone answers
    assert compact.status_code == 503
    assert compact.json()["error"]["code"] == "redis"
    assert "hunter2" not in compact.text
    assert history.status_code == 200 and len(history.json()["messages"]) == 40
