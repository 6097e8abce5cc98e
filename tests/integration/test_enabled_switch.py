"""``COMPACTION_ENABLED=false`` (docs/architecture.md, "Settings", "Error codes"): the producers
never enqueue (the check answers ``disabled``, ``/compact`` is refused with
``compaction_disabled``, the pre-call hook hands the messages back unchanged), and a worker
refuses a job that was queued anyway (an older producer, the ingress stream): no start event,
the history unchanged. Real Redis and PostgreSQL; RQ's SimpleWorker runs the real job."""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Callable

import pytest

from compaction.core.contract import CompactionRequested
from compaction.core.errors import CompactionDisabled
from compaction.producers import trigger
from compaction.producers.context import Producers
from compaction.producers.ensure import ensure_compacted
from compaction.producers.relay import EventRelay
from compaction.service.events import EventPublisher
from compaction.service.keys import requests_stream
from compaction.service.queue import pending_request, submit
from compaction.worker.ingress import Ingress
from compaction.worker.runtime import Runtime, install
from tests.fakes import conversation
from tests.integration.producer_helpers import drain, queue, session_with
from tests.integration.worker_helpers import History, wait_until
from tests.services import RedisNamespace

Command = Callable[..., tuple[int, str, str]]
REFUSAL = "compaction is switched off (COMPACTION_ENABLED=false)"


def switched_off(ctx: Producers) -> Producers:
    """The same gateway, its settings with ``enabled=False``; the worker installed likewise."""
    settings = ctx.settings.model_copy(update={"enabled": False})
    publisher = EventPublisher(ctx.redis, prefix=settings.channel_prefix)
    install(Runtime(settings=settings, store=ctx.store, redis=ctx.redis, publisher=publisher))
    return Producers(settings=settings, store=ctx.store, redis=ctx.redis)


def test_the_check_answers_disabled_and_queues_nothing(ctx: Producers) -> None:
    session_id = session_with(ctx, 20)
    assert trigger.check_and_enqueue(ctx, session_id).status == "enqueued"  # on: it would
    drain(ctx)
    session_id = session_with(ctx, 20)
    off = switched_off(ctx)

    result = trigger.check_and_enqueue(off, session_id)

    assert result.status == "disabled" and result.request_id is None
    assert result.used_tokens >= result.threshold_tokens == 2_800  # still measured
    assert len(queue(ctx)) == 0
    assert pending_request(ctx.redis, ctx.settings.channel_prefix, session_id) is None
    # a system prompt over the threshold is no compaction's business once it is off
    big = trigger.check_and_enqueue(off, session_id, system_prompt="s" * 20_000)
    assert big.status == "disabled"


def test_the_pre_call_hook_returns_the_messages_unchanged(ctx: Producers) -> None:
    session_id = session_with(ctx, 20)
    messages = conversation(20)

    ensured = ensure_compacted(switched_off(ctx), session_id, messages=messages, timeout=1)

    assert ensured.status == "disabled" and ensured.event is None
    assert ensured.messages == messages and ensured.used_tokens == ensured.trigger.used_tokens
    assert len(queue(ctx)) == 0


def test_a_manual_request_is_refused_before_anything_is_queued(ctx: Producers) -> None:
    session_id = session_with(ctx, 20)

    with pytest.raises(CompactionDisabled) as err:
        trigger.request_manual(switched_off(ctx), session_id, focus="the failing tests")

    assert err.value.code == "compaction_disabled" and err.value.message == REFUSAL
    assert len(queue(ctx)) == 0


def test_a_queued_job_is_refused_without_a_start_event_and_the_history_is_unchanged(
    ctx: Producers,
) -> None:
    session_id = session_with(ctx, 20)
    relay = EventRelay(session_id, ctx=ctx)
    before = History.of(ctx.store, session_id)
    request = CompactionRequested(session_id=session_id, reason="manual")
    assert submit(ctx.redis, ctx.settings, request).status == "enqueued"  # queued while on
    switched_off(ctx)  # the worker's own settings say off

    drain(ctx)

    events = list(relay.events(timeout=1.0))
    relay.close()
    assert [(e.type, getattr(e, "code", None)) for e in events] == [
        ("compaction_failed", "compaction_disabled")
    ]
    assert events[0].request_id == request.request_id
    after = History.of(ctx.store, session_id)
    assert after.unchanged_since(before) and after.events == before.events  # no row added
    (run,) = ctx.store.runs(session_id)
    assert (run.status, run.code, run.error) == ("failed", "compaction_disabled", REFUSAL)
    assert pending_request(ctx.redis, ctx.settings.channel_prefix, session_id) is None


def test_an_ingress_request_reaches_the_worker_and_is_refused(ctx: Producers) -> None:
    session_id = session_with(ctx, 12)
    off = switched_off(ctx)
    ingress = Ingress(off.settings, ctx.redis, block_ms=100)
    payload = json.dumps(
        {"sessionId": session_id, "reason": "manual", "requestId": f"r-off-{session_id}"}
    )
    stream = requests_stream(ctx.settings.channel_prefix)
    subprocess.run(
        ["redis-cli", "-u", ctx.settings.redis_url, "XADD", stream, "*", "payload", payload],
        check=True,
        capture_output=True,
    )
    relay = EventRelay(session_id, ctx=ctx)
    thread = threading.Thread(target=ingress.run)
    thread.start()
    wait_until(lambda: len(queue(ctx)) == 1, "the ingress queued the job")
    ingress.stop.set()
    thread.join(timeout=5)

    drain(ctx)

    events = list(relay.events(timeout=1.0))
    relay.close()
    assert [(e.type, getattr(e, "code", None)) for e in events] == [
        ("compaction_failed", "compaction_disabled")
    ]


def test_the_cli_compact_prints_one_line(
    command: Command, monkeypatch: pytest.MonkeyPatch, redis_namespace: RedisNamespace
) -> None:
    for name, value in redis_namespace.settings().items():
        monkeypatch.setenv(f"COMPACTION_{name.upper()}", str(value))
    monkeypatch.setenv("COMPACTION_ENABLED", "false")

    status, out, err = command("compact", "s1", "--wait")

    assert (status, out) == (1, "")
    assert err == f"compaction: error [compaction_disabled]: {REFUSAL}\n"
