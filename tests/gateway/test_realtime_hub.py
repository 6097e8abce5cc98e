"""The event hub (gateway/hub.py): one Redis connection per gateway process however many
sockets are open, a subscriber that falls behind ended without holding up the others, and
reading again after Redis comes back."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Iterator
from contextlib import ExitStack

import httpx
import pytest
import redis
from pydantic import SecretStr

from compaction.gateway import Resources
from compaction.gateway.hub import QUEUE_SIZE, Hub
from compaction.gateway.resources import GatewayOptions
from compaction.producers.context import Producers
from compaction.service.events import EventPublisher
from compaction.service.settings import Settings
from compaction.store import Store, make_sessionmaker
from tests.gateway.conftest import Gateway, serve
from tests.gateway.realtime_helpers import WAIT_S, publish, socket, token_update
from tests.services import PrivateRedis, RedisNamespace


@pytest.fixture
def private_redis() -> Iterator[PrivateRedis]:
    server = PrivateRedis()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def lone_gateway(gateway_database: str, private_redis: PrivateRedis) -> Iterator[Gateway]:
    """A gateway whose Redis is its own: every connection on it is this gateway's or the test's."""
    settings = Settings(database_url=gateway_database, redis_url=private_redis.url)
    factory = make_sessionmaker(gateway_database)
    client = redis.Redis.from_url(private_redis.url)
    token = secrets.token_urlsafe(16)
    resources = Resources(
        settings=settings,
        producers=Producers(settings=settings, store=Store(factory), redis=client),
        options=GatewayOptions(token=SecretStr(token)),
    )
    namespace = RedisNamespace(prefix="compaction", queue="compaction", url=private_redis.url)
    headers = {"Authorization": f"Bearer {token}"}
    with serve(resources) as url, httpx.Client(base_url=url, headers=headers) as http:
        yield Gateway(url, token, resources, http, namespace)
    client.close()
    factory.kw["bind"].dispose()


def test_fifty_sockets_share_one_redis_connection(
    lone_gateway: Gateway, private_redis: PrivateRedis
) -> None:
    sessions = [lone_gateway.store.create_session() for _ in range(5)]
    with ExitStack() as stack:
        sockets = [
            (session_id, stack.enter_context(socket(lone_gateway, session_id)))
            for session_id in sessions
            for _ in range(10)
        ]
        events = {session_id: token_update(session_id) for session_id in sessions}
        for event in events.values():
            publish(lone_gateway, event)
        received = [(session_id, ws.receive()) for session_id, ws in sockets]
        with redis.Redis.from_url(private_redis.url) as looking:
            clients = looking.client_list()
    assert all(got == events[session_id].to_wire() for session_id, got in received)
    readers = [c for c in clients if c["cmd"] in ("xread", "xreadgroup", "subscribe")]
    assert len(readers) == 1, clients  # the hub's, however many sockets
    # the hub, the producers' command client (publishing above), this look: not one per socket
    assert len(clients) <= 4, clients


def test_a_socket_keeps_its_events_across_a_redis_restart(
    lone_gateway: Gateway, private_redis: PrivateRedis
) -> None:
    session_id = lone_gateway.store.create_session()
    with socket(lone_gateway, session_id) as ws:
        private_redis.restart()  # the hub's read fails; it reconnects with backoff
        event = token_update(session_id, used=4_242)
        publish(lone_gateway, event)
        assert ws.receive() == event.to_wire()


def test_a_subscriber_that_falls_behind_is_ended_and_the_others_get_everything(
    redis_namespace: RedisNamespace, redis_client: redis.Redis
) -> None:
    settings = Settings(**redis_namespace.settings())
    publisher = EventPublisher(redis_client, prefix=settings.channel_prefix)
    count = QUEUE_SIZE + 10

    async def scenario() -> tuple[int, bool, bool]:
        hub = Hub(settings)
        await hub.start()
        try:
            with hub.subscribe("s1") as slow, hub.subscribe("s1") as fast:
                for n in range(count):
                    await asyncio.to_thread(publisher.publish, token_update("s1", used=n))
                    # the fast one reads as they come; the slow one never does
                    delivery = await asyncio.wait_for(fast.next(), WAIT_S)
                    assert delivery is not None and delivery.event is not None
                return count, slow.ended, await slow.next() is None
        finally:
            await hub.stop()

    delivered, ended, told = asyncio.run(scenario())
    assert delivered == count and ended and told


def test_stopping_the_hub_ends_its_subscriptions(redis_namespace: RedisNamespace) -> None:
    async def scenario() -> bool:
        hub = Hub(Settings(**redis_namespace.settings()))
        await hub.start()
        with hub.subscribe("s1") as subscription:
            await hub.stop()
            return await asyncio.wait_for(subscription.next(), WAIT_S) is None

    assert asyncio.run(scenario())
