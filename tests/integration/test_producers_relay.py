"""The event relay (producers/relay.py): a session's events in order, and the gap replayed after
a Redis restart."""

from __future__ import annotations

import threading

import redis

from compaction.core.contract import ContextUsage, TokenUpdate
from compaction.producers.context import Producers
from compaction.producers.relay import EventRelay
from compaction.producers.tokens import publish_token_update
from compaction.service.events import EventPublisher
from tests.integration.producer_helpers import session_with
from tests.integration.worker_helpers import wait_until
from tests.services import PrivateRedis


def test_relay_gets_events_in_order_filtered_by_session(ctx: Producers) -> None:
    mine, other = session_with(ctx, 2), session_with(ctx, 2)
    with EventRelay(mine, ctx=ctx) as relay:
        for session_id in (mine, other, mine):
            publish_token_update(ctx, session_id)
        got = list(relay.events(timeout=0.5))
    assert [e.session_id for e in got] == [mine, mine]
    assert got[0].timestamp <= got[1].timestamp


def test_relay_survives_a_redis_restart_and_replays_the_gap(ctx: Producers) -> None:
    server = PrivateRedis()
    server.start()
    try:
        settings = ctx.settings.model_copy(update={"redis_url": server.url})
        client = redis.Redis.from_url(server.url)
        private = Producers(settings=settings, store=ctx.store, redis=client)
        publisher = EventPublisher(client, prefix=settings.channel_prefix)
        session_id = session_with(ctx, 2)
        relay = EventRelay(session_id, ctx=private)
        seen: list[int] = []

        def listen() -> None:
            for event in relay.events(timeout=20):
                seen.append(event.context.used_tokens)  # type: ignore[union-attr]
                if len(seen) == 3:
                    return

        thread = threading.Thread(target=listen)
        thread.start()
        publisher.publish(trigger_event(session_id, 1))
        wait_until(lambda: seen == [1], "the first event")
        server.restart()  # the relay's connection drops; the stream starts empty again
        # Published while the relay is still backing off: it must replay them.
        fresh = redis.Redis.from_url(server.url)
        fresh_publisher = EventPublisher(fresh, prefix=settings.channel_prefix)
        fresh_publisher.publish(trigger_event(session_id, 2))
        fresh_publisher.publish(trigger_event(session_id, 3))
        thread.join(timeout=25)
        relay.close()
        assert seen == [1, 2, 3]
    finally:
        server.stop()


def trigger_event(session_id: str, used: int) -> TokenUpdate:
    return TokenUpdate(
        session_id=session_id,
        context=ContextUsage(
            used_tokens=used, max_tokens=100, percent=float(used), threshold_percent=70
        ),
    )
