"""The pre-call hook (producers/ensure.py, producers.aio): the turn that crosses the threshold,
or the first one after a switch to a smaller model, is sent compacted; a message sent while a
compaction is queued or runs waits for it; fire-and-forget waits only when the call would not
fit; a timeout is a status. Real Redis and PostgreSQL, RQ's own worker running the real job in
this process, the fake LLM server over HTTP."""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

from compaction import producers
from compaction.core.contract import CompactionDone
from compaction.core.tokens import estimate_messages_tokens
from compaction.producers import aio, configure, ensure, trigger
from compaction.producers.context import Producers
from compaction.producers.ensure import Ensured
from compaction.producers.relay import EventRelay
from compaction.service.events import EventPublisher
from compaction.service.keys import lock_key, lock_token
from tests.fakes import conversation
from tests.integration.producer_helpers import drain, queue, session_with


def drained_while_waiting(
    ctx: Producers,
    monkeypatch: pytest.MonkeyPatch,
    module: ModuleType,
    call: Callable[[], Ensured],
) -> Ensured:
    """``call`` in a thread; once it waits for a request (queued by then), RQ's worker runs the
    queue in this thread (it installs signal handlers: the main thread only)."""
    waiting = threading.Event()
    original = module.wait_for_request
    spy: Callable[..., Any]
    if inspect.iscoroutinefunction(original):

        async def spy(*args: Any, **kwargs: Any) -> Any:
            waiting.set()
            return await original(*args, **kwargs)

    else:

        def spy(*args: Any, **kwargs: Any) -> Any:
            waiting.set()
            return original(*args, **kwargs)

    monkeypatch.setattr(module, "wait_for_request", spy)
    out: list[Ensured | BaseException] = []

    def run() -> None:
        try:
            out.append(call())
        except BaseException as err:  # handed to the test's thread
            out.append(err)

    thread = threading.Thread(target=run)
    thread.start()
    waited = waiting.wait(30)
    drain(ctx)
    thread.join(60)
    assert waited and not thread.is_alive()
    if isinstance(out[0], BaseException):
        raise out[0]
    return out[0]


def stored_view(ctx: Producers, session_id: str) -> list[object]:
    return [stored.message for stored in ctx.store.load_history(session_id)]


def assert_compacted(ctx: Producers, session_id: str, ensured: Ensured) -> None:
    assert ensured.status == "compacted" and isinstance(ensured.event, CompactionDone)
    assert ensured.event.request_id == ensured.trigger.request_id
    assert ensured.messages == stored_view(ctx, session_id)  # pruned, or summarized too
    assert ensured.used_tokens == estimate_messages_tokens(ensured.messages)
    assert ensured.used_tokens < ensured.trigger.threshold_tokens <= ensured.trigger.used_tokens


# --- the turn that crosses the threshold ------------------------------------------------------


def test_the_crossing_turn_is_sent_compacted(
    ctx: Producers, monkeypatch: pytest.MonkeyPatch
) -> None:
    session_id = session_with(ctx, 14)
    before = ensure.ensure_compacted(ctx, session_id)
    assert before.status == "below_threshold" and before.event is None
    assert before.messages == stored_view(ctx, session_id) and len(queue(ctx)) == 0
    ctx.store.append_messages(session_id, conversation(3, system=False, first_turn=14))
    ensured = drained_while_waiting(
        ctx, monkeypatch, ensure, lambda: ensure.ensure_compacted(ctx, session_id)
    )
    assert ensured.trigger.status == "enqueued"
    assert_compacted(ctx, session_id, ensured)


def test_the_first_turn_after_a_switch_to_a_smaller_model_is_sent_compacted(
    ctx: Producers, monkeypatch: pytest.MonkeyPatch
) -> None:
    session_id = session_with(ctx, 10)
    configure(ctx)
    try:
        roomy = producers.ensure_compacted(session_id)
        assert roomy.status == "below_threshold" and roomy.trigger.max_tokens == 4_000
        ensured = drained_while_waiting(
            ctx,
            monkeypatch,
            ensure,
            lambda: producers.ensure_compacted(session_id, model="small-model"),
        )
    finally:
        configure(None)
    assert ensured.trigger.max_tokens == 2_000
    assert_compacted(ctx, session_id, ensured)


def test_the_gateways_own_messages_come_back_when_nothing_is_compacted(ctx: Producers) -> None:
    session_id = session_with(ctx, 3)
    mine = conversation(3)
    ensured = ensure.ensure_compacted(ctx, session_id, messages=mine, system_prompt="Be brief.")
    assert ensured.status == "below_threshold" and ensured.messages == mine
    assert ensured.used_tokens == ensured.trigger.used_tokens
    assert ensured.used_tokens > estimate_messages_tokens(mine)  # the system prompt counts


# --- fire-and-forget --------------------------------------------------------------------------


def test_fire_and_forget_over_the_threshold_returns_at_once(ctx: Producers) -> None:
    session_id = session_with(ctx, 20)  # over 2,800, under 4,000
    ensured = ensure.ensure_compacted(ctx, session_id, wait=False)
    assert ensured.status == "enqueued" and ensured.event is None
    assert ensured.trigger.used_tokens < ensured.trigger.max_tokens
    assert ensured.messages == stored_view(ctx, session_id)  # not compacted yet
    assert len(queue(ctx)) == 1


def test_fire_and_forget_waits_when_the_call_would_not_fit(
    ctx: Producers, monkeypatch: pytest.MonkeyPatch
) -> None:
    session_id = session_with(ctx, 30)  # over the 4,000 window
    ensured = drained_while_waiting(
        ctx, monkeypatch, ensure, lambda: ensure.ensure_compacted(ctx, session_id, wait=False)
    )
    assert ensured.trigger.used_tokens >= ensured.trigger.max_tokens
    assert_compacted(ctx, session_id, ensured)


# --- a message while a compaction is queued or running ----------------------------------------


def test_a_message_while_a_manual_compaction_is_queued_waits_for_it(
    ctx: Producers, monkeypatch: pytest.MonkeyPatch
) -> None:
    session_id = session_with(ctx, 12)  # under the threshold
    queued = trigger.request_manual(ctx, session_id, focus="keep the paths")
    ensured = drained_while_waiting(
        ctx, monkeypatch, ensure, lambda: ensure.ensure_compacted(ctx, session_id)
    )
    assert ensured.trigger.status == "below_threshold"
    assert ensured.status == "compacted" and ensured.event is not None
    assert ensured.event.request_id == queued.request_id
    assert ensured.messages == stored_view(ctx, session_id)
    assert any(m.is_summary for m in ensured.messages)
    assert ensured.used_tokens < ensured.trigger.used_tokens


def test_a_message_while_a_compaction_runs_waits_for_its_final_event(ctx: Producers) -> None:
    session_id = session_with(ctx, 12)
    prefix = ctx.settings.channel_prefix
    ctx.redis.set(lock_key(prefix, session_id), lock_token("req-running"))
    publisher = EventPublisher(ctx.redis, prefix=prefix)
    done = CompactionDone(
        session_id=session_id,
        request_id="req-running",
        reason="manual",
        removed_count=0,
        tokens_before=1,
        tokens_after=1,
    )
    timer = threading.Timer(0.3, publisher.publish, args=(done,))
    timer.start()  # the running worker's done, once the call waits
    ensured = ensure.ensure_compacted(ctx, session_id, timeout=30)
    timer.join()
    assert ensured.status == "compacted" and ensured.event == done
    assert ensured.messages == stored_view(ctx, session_id)
    assert len(queue(ctx)) == 0


# --- a timeout is a status --------------------------------------------------------------------


def test_a_timeout_returns_the_uncompacted_messages(ctx: Producers) -> None:
    session_id = session_with(ctx, 20)
    uncompacted = stored_view(ctx, session_id)
    ensured = ensure.ensure_compacted(ctx, session_id, timeout=0.3)  # no worker runs
    assert ensured.status == "timed_out" and ensured.event is None
    assert ensured.trigger.status == "enqueued"
    assert ensured.messages == uncompacted
    assert ensured.used_tokens == ensured.trigger.used_tokens


def test_nothing_to_compact_is_not_enqueued_nor_waited_for(ctx: Producers) -> None:
    session_id = ctx.store.create_session()
    ctx.store.append_messages(session_id, conversation(1)[:3])  # within the protected head
    ctx.store.append_messages(session_id, [conversation(1, tool_chars=20_000)[3]])
    relay = EventRelay(session_id, ctx=ctx)
    ensured = ensure.ensure_compacted(ctx, session_id, timeout=30)
    assert ensured.status == "nothing_to_compact" and ensured.event is None
    assert ensured.trigger.used_tokens >= ensured.trigger.max_tokens
    assert len(queue(ctx)) == 0
    assert list(relay.events(timeout=0.3)) == []
    relay.close()


# --- asyncio ----------------------------------------------------------------------------------


def test_the_asyncio_twin_sends_the_crossing_turn_compacted(
    ctx: Producers, monkeypatch: pytest.MonkeyPatch
) -> None:
    session_id = session_with(ctx, 14)
    ctx.store.append_messages(session_id, conversation(3, system=False, first_turn=14))
    configure(ctx)
    try:
        ensured = drained_while_waiting(
            ctx, monkeypatch, aio, lambda: asyncio.run(aio.ensure_compacted(session_id))
        )
    finally:
        configure(None)
    assert_compacted(ctx, session_id, ensured)


def test_the_asyncio_twin_times_out_with_a_status(ctx: Producers) -> None:
    session_id = session_with(ctx, 20)
    configure(ctx)
    try:
        ensured = asyncio.run(aio.ensure_compacted(session_id, timeout=0.3))
    finally:
        configure(None)
    assert ensured.status == "timed_out" and ensured.messages == stored_view(ctx, session_id)
