"""What a gateway calls (issue "4 of 5"): real Redis and PostgreSQL, RQ's own SimpleWorker
running the real job in-process, the fake LLM server over HTTP."""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
import time
from collections.abc import Iterator
from types import ModuleType

import pytest
import redis
from rq import Queue, SimpleWorker
from rq.serializers import JSONSerializer
from sqlalchemy import text

import producers
from compaction.errors import (
    InvalidConfig,
    InvalidRequest,
    SessionNotFound,
    SystemPromptTooLarge,
)
from producers import aio, configure, trigger
from producers.context import Producers
from producers.relay import EventRelay
from producers.tokens import publish_token_update
from producers.wait import wait_for_compaction
from service.events import EventPublisher
from service.keys import dead_stream, lock_key, lock_token, pending_key, requests_stream
from service.queue import compaction_queue
from service.settings import Settings
from store import Store, make_engine, make_sessionmaker
from store.models import Base
from tests.fakes import conversation
from tests.integration.helpers import record_run
from tests.integration.worker_helpers import wait_until
from tests.llm_server import FakeLLM
from tests.services import PrivateRedis, RedisNamespace
from worker.ingress import Ingress
from worker.runtime import Runtime, install


@pytest.fixture
def ctx(
    postgres_url: str,
    fake_llm: FakeLLM,
    redis_namespace: RedisNamespace,
    redis_client: redis.Redis,
) -> Iterator[Producers]:
    engine = make_engine(postgres_url)
    tables = ", ".join(t.name for t in Base.metadata.sorted_tables)
    with engine.begin() as conn:
        conn.execute(text(f"TRUNCATE {tables} RESTART IDENTITY CASCADE"))
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


def session_with(ctx: Producers, turns: int) -> str:
    session_id = ctx.store.create_session()
    ctx.store.append_messages(session_id, conversation(turns))
    return session_id


def queue(ctx: Producers) -> Queue:
    """The test's own queue (``redis_namespace``)."""
    return compaction_queue(ctx.redis, ctx.settings.queue_name)


def drain(ctx: Producers) -> None:
    """Run every queued job with RQ's SimpleWorker, in this process (JSON serializer)."""
    SimpleWorker([queue(ctx)], connection=ctx.redis, serializer=JSONSerializer).work(burst=True)


# --- the threshold check (seed §2.1) ------------------------------------------------------


def test_below_threshold(ctx: Producers) -> None:
    result = trigger.check_and_enqueue(ctx, session_with(ctx, 3))
    assert result.status == "below_threshold" and result.request_id is None
    assert result.max_tokens == 4_000 and result.threshold_tokens == 2_800
    assert 0 < result.used_tokens < 2_800 and result.estimated


def test_enqueued_then_already_pending_then_in_flight(ctx: Producers) -> None:
    session_id = session_with(ctx, 20)
    first = trigger.check_and_enqueue(ctx, session_id)
    assert first.status == "enqueued" and first.used_tokens >= first.threshold_tokens
    prefix = ctx.settings.channel_prefix
    assert ctx.redis.get(pending_key(prefix, session_id)) == first.request_id.encode()
    assert len(queue(ctx)) == 1
    again = trigger.check_and_enqueue(ctx, session_id)
    assert again.status == "already_pending" and again.request_id == first.request_id
    ctx.redis.delete(pending_key(prefix, session_id))
    ctx.redis.set(lock_key(prefix, session_id), lock_token("req-42"))
    running = trigger.check_and_enqueue(ctx, session_id)
    assert running.status == "in_flight" and running.request_id == "req-42"
    assert len(queue(ctx)) == 1  # nothing more was queued


def test_suppressed_by_the_anti_loop_rule(ctx: Producers, redis_namespace: RedisNamespace) -> None:
    session_id = session_with(ctx, 20)
    used = trigger.check_and_enqueue(ctx, session_id).used_tokens
    redis_namespace.clear(ctx.redis)
    for _ in range(2):  # two compactions that saved under 10% each
        record_run(ctx.store, session_id, used, used - used // 20)
    result = trigger.check_and_enqueue(ctx, session_id)
    assert result.status == "suppressed" and len(queue(ctx)) == 0
    assert trigger.request_manual(ctx, session_id).status == "enqueued"  # manual still runs


def test_system_prompt_too_large(ctx: Producers) -> None:
    with pytest.raises(SystemPromptTooLarge) as err:
        trigger.check_and_enqueue(ctx, session_with(ctx, 1), system_prompt="s" * 20_000)
    assert err.value.code == "system_prompt_too_large"


def test_a_model_switch_that_shrinks_the_window_triggers_at_once(ctx: Producers) -> None:
    session_id = session_with(ctx, 10)
    roomy = trigger.check_and_enqueue(ctx, session_id, model="claude-sonnet-4-5")
    assert roomy.status == "below_threshold" and roomy.max_tokens == 200_000
    small = trigger.check_and_enqueue(ctx, session_id, model="small-model")
    assert small.status == "enqueued" and small.max_tokens == 2_000


def test_messages_passed_by_the_gateway_are_estimated_incrementally(
    ctx: Producers, redis_namespace: RedisNamespace
) -> None:
    session_id = session_with(ctx, 1)
    messages = conversation(10)
    first = trigger.check_and_enqueue(ctx, session_id, messages=messages)
    messages.extend(conversation(20, system=False, first_turn=10))
    second = trigger.check_and_enqueue(ctx, session_id, messages=messages)
    assert first.status == "below_threshold" and second.status == "enqueued"
    fresh = Producers(settings=ctx.settings, store=ctx.store, redis=ctx.redis)
    redis_namespace.clear(ctx.redis)
    assert trigger.check_and_enqueue(fresh, session_id, messages=messages).used_tokens == (
        second.used_tokens
    )


def test_unknown_session(ctx: Producers) -> None:
    with pytest.raises(SessionNotFound):
        trigger.check_and_enqueue(ctx, "no-such-session")
    with pytest.raises(SessionNotFound):
        trigger.request_manual(ctx, "no-such-session")


# --- /compact (seed §2.2, §8.2) ------------------------------------------------------------


def test_manual_runs_below_threshold_and_the_focus_reaches_the_prompt(
    ctx: Producers, fake_llm: FakeLLM
) -> None:
    session_id = session_with(ctx, 12)
    assert trigger.check_and_enqueue(ctx, session_id).status == "below_threshold"
    queued = trigger.request_manual(ctx, session_id, focus="keep the database schema")
    assert queued.status == "enqueued"
    relay = EventRelay(session_id, ctx=ctx)
    drain(ctx)
    kinds = [e.type for e in relay.events(timeout=1)]
    relay.close()
    assert kinds == ["compaction_start", "compaction_done", "token_update"]
    assert "keep the database schema" in fake_llm.bodies_text()


def test_auto_and_manual_at_once_one_runs_one_is_not_queued_twice(ctx: Producers) -> None:
    session_id = session_with(ctx, 20)
    results: list[str] = []
    barrier = threading.Barrier(2)

    def auto() -> None:
        barrier.wait()
        results.append(trigger.check_and_enqueue(ctx, session_id).status)

    def manual() -> None:
        barrier.wait()
        results.append(trigger.request_manual(ctx, session_id).status)

    threads = [threading.Thread(target=auto), threading.Thread(target=manual)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == ["already_pending", "enqueued"]
    assert len(queue(ctx)) == 1


# --- waiting for a compaction (seed §9) ---------------------------------------------------


def looked_up(monkeypatch: pytest.MonkeyPatch, module: ModuleType) -> threading.Event:
    """Set once a waiter in ``module`` has read which request is queued or running: from then
    on it gets that request's final event, even one published before it reads the stream."""
    seen = threading.Event()
    original = module.queued_or_running

    def spy(*args: object) -> object:
        try:
            return original(*args)
        finally:
            seen.set()

    monkeypatch.setattr(module, "queued_or_running", spy)
    return seen


def test_wait_returns_the_final_event_after_done(
    ctx: Producers, monkeypatch: pytest.MonkeyPatch
) -> None:
    looked = looked_up(monkeypatch, producers.wait)
    session_id = session_with(ctx, 12)
    queued = trigger.request_manual(ctx, session_id)
    waited: list[object] = []
    waiter = threading.Thread(
        target=lambda: waited.append(wait_for_compaction(ctx, session_id, timeout=30))
    )
    waiter.start()  # RQ's worker installs signal handlers: it runs in the main thread
    assert looked.wait(30)
    drain(ctx)
    waiter.join()
    event = waited[0]
    assert event is not None and event.type == "compaction_done"  # type: ignore[attr-defined]
    assert event.request_id == queued.request_id  # type: ignore[attr-defined]
    assert wait_for_compaction(ctx, session_id, timeout=1) is None  # nothing pending now


def test_wait_times_out_clearly_when_nothing_happens(ctx: Producers) -> None:
    session_id = session_with(ctx, 12)
    trigger.request_manual(ctx, session_id)  # queued, but no worker runs it
    started = time.monotonic()
    with pytest.raises(TimeoutError, match="no final event"):
        wait_for_compaction(ctx, session_id, timeout=0.5)
    assert 0.5 <= time.monotonic() - started < 30  # waited its time; 30: no hang


def test_wait_without_anything_pending_is_none(ctx: Producers) -> None:
    assert wait_for_compaction(ctx, session_with(ctx, 2), timeout=0.1) is None


# --- token_update (seed §6) ---------------------------------------------------------------


def test_token_update_figures(ctx: Producers) -> None:
    session_id = session_with(ctx, 10)
    relay = EventRelay(session_id, ctx=ctx)
    event = publish_token_update(
        ctx,
        session_id,
        usage={"inputTokens": 120, "outputTokens": 30, "totalTokens": 150, "apiCalls": 2},
    )
    wire = event.to_wire()
    assert wire["context"]["maxTokens"] == 4_000 and wire["context"]["thresholdPercent"] == 70
    assert wire["context"]["estimated"] is True
    assert wire["context"]["percent"] == round(100 * wire["context"]["usedTokens"] / 4_000, 1)
    assert wire["current"] == {
        "inputTokens": 120,
        "outputTokens": 30,
        "totalTokens": 150,
        "apiCalls": 2,
    }
    assert [e.type for e in relay.events(timeout=0.5)] == ["token_update"]
    relay.close()


# --- the event relay ------------------------------------------------------------------------


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


def trigger_event(session_id: str, used: int) -> object:
    from compaction.contract import ContextUsage, TokenUpdate

    return TokenUpdate(
        session_id=session_id,
        context=ContextUsage(
            used_tokens=used, max_tokens=100, percent=float(used), threshold_percent=70
        ),
    )


# --- the stream ingress (DESIGN §6) -----------------------------------------------------------


def test_ingress_from_raw_redis_cli_xadd(ctx: Producers) -> None:
    session_id = session_with(ctx, 12)
    ingress = Ingress(ctx.settings, ctx.redis, block_ms=100)
    prefix = ctx.settings.channel_prefix
    stream = requests_stream(prefix)
    valid_id = f"r-valid-{session_id}"  # the job's id derives from it: unique across runs
    valid = json.dumps(
        {
            "sessionId": session_id,
            "reason": "manual",
            "requestId": valid_id,
            "requestedAt": "2026-11-30T00:00:00Z",
        }
    )
    broken = [
        "{not json",
        json.dumps({"sessionId": session_id, "reason": "sometimes", "requestId": "r-bad"}),
        json.dumps({"reason": "manual"}),
    ]
    for payload in [valid, *broken]:
        subprocess.run(
            ["redis-cli", "-u", ctx.settings.redis_url, "XADD", stream, "*", "payload", payload],
            check=True,
            capture_output=True,
        )
    relay = EventRelay(session_id, ctx=ctx)
    thread = threading.Thread(target=ingress.run)
    thread.start()
    wait_until(lambda: ctx.redis.xlen(dead_stream(prefix)) >= 3, "three dead entries")
    ingress.stop.set()
    thread.join(timeout=5)
    jobs = queue(ctx).jobs
    assert [job.args[0]["requestId"] for job in jobs] == [valid_id]
    dead = ctx.redis.xrange(dead_stream(prefix))
    assert len(dead) == 3 and all(b"invalid compaction_requested" in f[b"reason"] for _, f in dead)
    failed = [e for e in relay.events(timeout=0.5) if e.type == "compaction_failed"]
    relay.close()
    assert [(e.request_id, e.code) for e in failed] == [("r-bad", "invalid_request")]
    pending = ctx.redis.xpending(stream, "compaction-ingress")
    assert pending["pending"] == 0  # every entry acknowledged, the broken ones too


# --- the asyncio twins ----------------------------------------------------------------------


def test_asyncio_twins(ctx: Producers, monkeypatch: pytest.MonkeyPatch) -> None:
    looked = looked_up(monkeypatch, aio)
    session_id = session_with(ctx, 20)
    configure(ctx)
    try:

        async def scenario() -> tuple[str, list[str], object]:
            async with aio.AsyncEventRelay(session_id, ctx=ctx) as relay:
                result = await aio.check_and_enqueue(session_id)
                waited = asyncio.create_task(aio.wait_for_compaction(session_id, timeout=20))
                assert await asyncio.to_thread(looked.wait, 30)
                await asyncio.to_thread(drain_in_thread_safe_way, ctx)
                final = await waited
                kinds = [e.type async for e in relay.events(timeout=1)]
            return result.status, kinds, final

        status, kinds, final = asyncio.run(scenario())
    finally:
        configure(None)
    assert status == "enqueued"
    assert kinds == ["compaction_start", "compaction_done", "token_update"]
    assert final is not None and final.type == "compaction_done"  # type: ignore[attr-defined]


def drain_in_thread_safe_way(ctx: Producers) -> None:
    """Run the queued job without RQ's signal handling (this runs off the main thread)."""
    from worker.jobs import compaction_requested

    for job in queue(ctx).jobs:
        compaction_requested(job.args[0])
        job.delete()


# --- refused input: the project's errors, never pydantic's (docs/architecture.md, "Error codes")


def test_a_manual_request_out_of_bounds_is_refused_and_nothing_is_queued(ctx: Producers) -> None:
    session_id = session_with(ctx, 3)
    configure(ctx)
    try:
        with pytest.raises(InvalidRequest) as focus:
            producers.request_manual(session_id, focus="x" * 5_000)
        with pytest.raises(InvalidRequest, match="invalid compaction request: focus"):
            asyncio.run(aio.request_manual(session_id, focus="x" * 5_000))
    finally:
        configure(None)
    assert focus.value.code == "invalid_request"
    assert focus.value.message == (
        "invalid compaction request: focus: String should have at most 2000 characters"
    )
    with pytest.raises(InvalidRequest, match="context_window: Input should be greater than"):
        trigger.request_manual(ctx, session_id, context_window=10)
    assert len(queue(ctx)) == 0
    assert ctx.redis.get(pending_key(ctx.settings.channel_prefix, session_id)) is None


def test_a_model_name_no_request_can_carry_is_refused(ctx: Producers) -> None:
    session_id = session_with(ctx, 20)  # over the threshold: a request is built
    with pytest.raises(InvalidRequest, match="model: String should have at most 128 characters"):
        trigger.check_and_enqueue(ctx, session_id, model="m" * 200)
    assert len(queue(ctx)) == 0


def test_usage_that_is_not_token_counts_is_refused_and_not_published(ctx: Producers) -> None:
    session_id = session_with(ctx, 2)
    relay = EventRelay(session_id, ctx=ctx)
    with pytest.raises(InvalidRequest, match="invalid usage: inputTokens"):
        publish_token_update(ctx, session_id, usage={"inputTokens": "many"})
    assert list(relay.events(timeout=0.3)) == []
    relay.close()


def test_settings_out_of_range_are_invalid_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPACTION_THRESHOLD_PERCENT", "500")
    configure(None)  # the module-level functions build their resources from the settings
    with pytest.raises(InvalidConfig) as caught:
        producers.check_and_enqueue("s1")
    assert caught.value.code == "invalid_config"
    assert caught.value.message == (
        "invalid settings: threshold_percent: Input should be less than or equal to 95"
    )
