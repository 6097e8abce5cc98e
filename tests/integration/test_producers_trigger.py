"""What a gateway calls to have a session compacted (producers/trigger.py; docs/architecture.md,
"The job"): the threshold check, a manual /compact, and the input they refuse with the
project's errors. Real Redis and PostgreSQL, RQ's own SimpleWorker running the real job
in-process, the fake LLM server over HTTP."""

from __future__ import annotations

import asyncio
import threading

import pytest

from compaction import producers
from compaction.core.errors import (
    InvalidConfig,
    InvalidRequest,
    SessionNotFound,
    SystemPromptTooLarge,
)
from compaction.core.messages import Message
from compaction.core.tokens import estimate_messages_tokens
from compaction.producers import aio, configure, trigger
from compaction.producers.context import Producers
from compaction.producers.relay import EventRelay
from compaction.service.keys import lock_key, lock_token, pending_key
from compaction.service.queue import pending_request
from tests.fakes import conversation
from tests.integration.helpers import record_run
from tests.integration.producer_helpers import drain, queue, session_with
from tests.llm_server import FakeLLM
from tests.services import RedisNamespace

# --- the threshold check (docs/architecture.md, "The job") ----------------------------------------


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
    assert pending_request(ctx.redis, prefix, session_id) == first.request_id
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


def test_a_stored_system_prompt_alone_over_the_threshold_is_refused(ctx: Producers) -> None:
    session_id = ctx.store.create_session()
    ctx.store.append_messages(session_id, [Message(role="system", content="s" * 6_000)])
    assert trigger.check_and_enqueue(ctx, session_id).status == "below_threshold"
    # counted on from the cache: the leading system rows grow past 2,800 tokens
    more = [Message(role="system", content="t" * 6_000), Message(role="user", content="hi")]
    ctx.store.append_messages(session_id, more)
    with pytest.raises(SystemPromptTooLarge) as err:
        trigger.check_and_enqueue(ctx, session_id)
    assert err.value.code == "system_prompt_too_large" and "3020 tokens" in err.value.message
    assert len(queue(ctx)) == 0


def test_a_system_row_after_the_conversation_began_is_not_the_system_prompt(
    ctx: Producers,
) -> None:
    session_id = session_with(ctx, 5)
    assert trigger.check_and_enqueue(ctx, session_id).status == "below_threshold"
    ctx.store.append_messages(session_id, [Message(role="system", content="n" * 12_000)])
    over = trigger.check_and_enqueue(ctx, session_id)  # no SystemPromptTooLarge
    assert over.status == "enqueued"
    rows = [stored.message for stored in ctx.store.load_history(session_id)]
    assert over.used_tokens == estimate_messages_tokens(rows)


def test_nothing_to_compact_is_not_enqueued(
    ctx: Producers, redis_namespace: RedisNamespace
) -> None:
    huge = [  # three huge messages, all within the protected head
        Message(role="user", content="u" * 6_000),
        Message(role="assistant", content="a" * 6_000),
        Message(role="user", content="v" * 6_000),
    ]
    session_id = ctx.store.create_session()
    ctx.store.append_messages(session_id, huge)
    relay = EventRelay(session_id, ctx=ctx)
    stored = trigger.check_and_enqueue(ctx, session_id)
    assert stored.status == "nothing_to_compact" and stored.request_id is None
    assert stored.used_tokens >= stored.threshold_tokens
    # the gateway's own six: the head of three and the minimal tail of three
    passed = trigger.check_and_enqueue(ctx, session_id, messages=[*huge, *huge])
    assert passed.status == "nothing_to_compact"
    assert trigger.check_and_enqueue(ctx, session_id, messages=huge * 3).status == "enqueued"
    redis_namespace.clear(ctx.redis)
    assert len(queue(ctx)) == 0
    assert pending_request(ctx.redis, ctx.settings.channel_prefix, session_id) is None
    assert list(relay.events(timeout=0.3)) == []
    relay.close()


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


# --- /compact (docs/architecture.md, "The job", "Events") -----------------------------------------


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
    # The manual one second upgrades the queued auto one; the auto one second finds it queued.
    assert sorted(results) in (["already_pending", "enqueued"], ["enqueued", "upgraded"])
    assert len(queue(ctx)) == 1


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


def test_settings_out_of_range_are_invalid_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPACTION_THRESHOLD_PERCENT", "500")
    configure(None)  # the module-level functions build their resources from the settings
    with pytest.raises(InvalidConfig) as caught:
        producers.check_and_enqueue("s1")
    assert caught.value.code == "invalid_config"
    assert caught.value.message == (
        "invalid settings: threshold_percent: Input should be less than or equal to 95"
    )
