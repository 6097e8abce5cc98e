"""What the ingress does with the requests it reads (worker/ingress.py, service/queue.py;
docs/architecture.md, "The job", "Redis keys"): no request vanishes (one request id in two
sessions runs twice; an unexpected error, a lost connection or a dead ingress leaves no entry
unanswered) and Redis holds no more than it must (handled entries leave the stream, a dead
letter keeps a capped payload and names its plain entry id)."""

from __future__ import annotations

import json
import re
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any, cast

import pytest
import redis

from compaction.core.contract import FINAL_EVENTS, CompactionRequested
from compaction.producers import trigger
from compaction.producers.context import Producers
from compaction.service.keys import dead_stream, events_stream, pending_key, requests_stream
from compaction.service.queue import submit
from compaction.worker import ingress as ingress_module
from compaction.worker.ingress import GROUP, Ingress
from tests.integration.producer_helpers import drain, queue, session_with
from tests.integration.worker_helpers import wait_until
from tests.llm_server import FakeLLM
from tests.services import stream_entries


@contextmanager
def running(ctx: Producers, **options: Any) -> Iterator[Ingress]:
    ingress = Ingress(ctx.settings, ctx.redis, block_ms=100, **options)
    thread = threading.Thread(target=ingress.run)
    thread.start()
    try:
        yield ingress
    finally:
        ingress.stop.set()
        thread.join(timeout=10)


def xadd(ctx: Producers, payload: bytes | dict[str, Any]) -> str:
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    entry_id = ctx.redis.xadd(requests_stream(ctx.settings.channel_prefix), {"payload": raw})
    return cast(bytes, entry_id).decode()


def manual(session_id: str, **fields: Any) -> dict[str, Any]:
    return {"sessionId": session_id, "reason": "manual", **fields}


def wait_enqueued(ctx: Producers, *session_ids: str) -> None:
    prefix = ctx.settings.channel_prefix
    for session_id in session_ids:
        wait_until(partial(ctx.redis.get, pending_key(prefix, session_id)), f"{session_id} queued")


def events(ctx: Producers) -> list[dict[str, Any]]:
    stream = events_stream(ctx.settings.channel_prefix)
    return [json.loads(fields[b"event"]) for _id, fields in stream_entries(ctx.redis, stream)]


def nothing_pending(ctx: Producers) -> bool:
    pending = ctx.redis.xpending(requests_stream(ctx.settings.channel_prefix), GROUP)
    return bool(pending["pending"] == 0)


@pytest.mark.parametrize("path", ["submit", "ingress"])
def test_one_request_id_in_two_sessions_runs_in_both(ctx: Producers, path: str) -> None:
    sessions = [session_with(ctx, 12), session_with(ctx, 12)]
    request_id = f"r-shared-{uuid.uuid4().hex[:8]}"
    if path == "submit":  # what the producers call
        for session_id in sessions:
            request = CompactionRequested(
                session_id=session_id, reason="manual", request_id=request_id
            )
            assert submit(ctx.redis, ctx.settings, request).status == "enqueued"
    else:
        with running(ctx):
            for session_id in sessions:
                xadd(ctx, manual(session_id, requestId=request_id))
            wait_enqueued(ctx, *sessions)
    drain(ctx)
    finals = [e for e in events(ctx) if e["type"] in FINAL_EVENTS]
    assert sorted((e["sessionId"], e["requestId"], e["type"]) for e in finals) == sorted(
        (session_id, request_id, "compaction_done") for session_id in sessions
    )


def test_a_raw_compact_upgrades_the_queued_auto_request(ctx: Producers, fake_llm: FakeLLM) -> None:
    """A manual entry (``XADD``) while the session's auto request is queued: its own request
    is answered at once (skipped, naming the queued request), and the queued one runs as
    manual with the entry's focus."""
    session_id = session_with(ctx, 20)  # over the threshold
    queued = trigger.check_and_enqueue(ctx, session_id)
    assert queued.status == "enqueued"
    focus, request_id = "keep the migration plan", f"r-{session_id}"
    xadd(ctx, manual(session_id, requestId=request_id, focus=focus))

    def answered() -> list[dict[str, Any]]:
        return [e for e in events(ctx) if e.get("requestId") == request_id]

    with running(ctx):
        [skipped] = wait_until(answered, "the entry answered")
    assert (skipped["type"], skipped["code"]) == ("compaction_skipped", "already_pending")
    assert queued.request_id in skipped["detail"] and "runs as this one asks" in skipped["detail"]
    assert len(queue(ctx)) == 1
    drain(ctx)
    [final] = [
        e for e in events(ctx) if e["requestId"] == queued.request_id and e["type"] in FINAL_EVENTS
    ]
    assert (final["type"], final["reason"]) == ("compaction_done", "manual")
    assert focus in fake_llm.bodies_text()
    [record] = ctx.store.runs(session_id)
    assert (record.request_id, record.reason) == (queued.request_id, "manual")


def test_an_unexpected_error_is_dead_lettered_and_answered_and_the_ingress_goes_on(
    ctx: Producers, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(client: redis.Redis, settings: Any, request: CompactionRequested) -> Any:
        if request.session_id == "s-boom":
            raise RuntimeError("a bug")
        return submit(client, settings, request)  # what the ingress calls

    monkeypatch.setattr(ingress_module, "submit", broken)
    boom = xadd(ctx, manual("s-boom"))
    after = f"s-after-{uuid.uuid4().hex[:8]}"
    xadd(ctx, manual(after))
    with running(ctx):
        wait_enqueued(ctx, after)
    [(_id, letter)] = stream_entries(ctx.redis, dead_stream(ctx.settings.channel_prefix))
    assert letter[b"entry"].decode() == boom and b"RuntimeError" in letter[b"reason"]
    [failed] = [e for e in events(ctx) if e["sessionId"] == "s-boom"]
    assert (failed["type"], failed["code"]) == ("compaction_failed", "internal_error")
    assert nothing_pending(ctx)


def test_an_entry_cut_short_by_a_lost_connection_is_read_again(
    ctx: Producers, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []

    def flaky(client: redis.Redis, settings: Any, request: CompactionRequested) -> Any:
        calls.append(request.request_id)
        if len(calls) == 1:
            raise redis.ConnectionError("connection lost")
        return submit(client, settings, request)

    monkeypatch.setattr(ingress_module, "submit", flaky)
    session_id = f"s-{uuid.uuid4().hex[:8]}"
    xadd(ctx, manual(session_id, requestId="r-1"))
    with running(ctx):
        wait_enqueued(ctx, session_id)
        wait_until(lambda: nothing_pending(ctx), "the entry acknowledged")
    assert calls == ["r-1", "r-1"]


def test_entries_a_dead_ingress_took_are_served_by_the_next(ctx: Producers) -> None:
    stream = requests_stream(ctx.settings.channel_prefix)
    Ingress(ctx.settings, ctx.redis).ensure_group()
    session_id = f"s-{uuid.uuid4().hex[:8]}"
    xadd(ctx, manual(session_id))
    # An ingress process read it, then died: its consumer name died with it.
    assert ctx.redis.xreadgroup(GROUP, "host-4242", {stream: ">"})
    with running(ctx, claim_idle_ms=0):
        wait_enqueued(ctx, session_id)
        wait_until(lambda: nothing_pending(ctx), "the entry acknowledged")


def test_handled_entries_leave_the_stream_and_a_dead_letter_is_capped(ctx: Producers) -> None:
    prefix = ctx.settings.channel_prefix
    sessions = [f"s-{uuid.uuid4().hex[:8]}" for _ in range(20)]
    for session_id in sessions:
        xadd(ctx, manual(session_id))
    huge = xadd(ctx, b"x" * 1_048_576)
    with running(ctx):
        wait_enqueued(ctx, *sessions)
        wait_until(lambda: ctx.redis.xlen(dead_stream(prefix)), "the dead letter")
    assert ctx.redis.xlen(requests_stream(prefix)) == 0
    [(_id, letter)] = stream_entries(ctx.redis, dead_stream(prefix))
    assert re.fullmatch(r"[0-9]+-[0-9]+", letter[b"entry"].decode())
    assert letter[b"entry"].decode() == huge
    assert letter[b"payload"] == b"x" * 4_096 and letter[b"size"] == b"1048576"
    assert nothing_pending(ctx)
