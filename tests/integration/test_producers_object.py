"""The producers' one object (producers/context.py) and its asyncio twin (producers/aio.py):
every method against real Redis and PostgreSQL, RQ's worker or the job itself running the
compaction in this process; the module-level functions (the default object's methods) and the
object agree."""

from __future__ import annotations

import asyncio
from typing import Any

from compaction import producers
from compaction.core.contract import AnyEvent, TokenUpdate, TokenUsage
from compaction.producers import AsyncProducers, SlashCommand, aio, configure
from compaction.producers.context import Producers
from compaction.producers.ensure import Ensured
from compaction.service.queue import EnqueueResult
from tests.integration.producer_helpers import drain, run_queued, session_with

USAGE = TokenUsage(input_tokens=1_200, output_tokens=80, total_tokens=1_280, api_calls=1)


def test_the_module_functions_are_the_default_objects_methods(ctx: Producers) -> None:
    session_id = session_with(ctx, 20)  # over its threshold
    idle = session_with(ctx, 2)
    configure(ctx)
    try:
        checked = ctx.check_and_enqueue(session_id)
        again = producers.check_and_enqueue(session_id)
        manual = ctx.request_manual(session_id, focus="the schema")
        manual_again = producers.request_manual(session_id)
        figures = ctx.token_update(session_id, usage=USAGE)
        published = producers.publish_token_update(session_id, usage=USAGE)
        nothing = (ctx.wait_for_compaction(idle, 1), producers.wait_for_compaction(idle, 1))
    finally:
        configure(None)
    assert checked.status == "enqueued" and checked.request_id is not None
    assert (again.status, again.request_id) == ("already_pending", checked.request_id)
    assert manual.status == "upgraded"  # the queued auto request, made manual
    assert manual_again.status == "already_pending"
    assert published == figures.model_copy(update={"timestamp": published.timestamp})
    assert published.context.used_tokens == checked.used_tokens
    assert nothing == (None, None)
    command = SlashCommand("compact", "keep the schema")
    assert Producers.parse_slash_command("/compact keep the schema") == command
    assert producers.parse_slash_command("/compact keep the schema") == command
    assert ctx.aio().parse_slash_command("/compact keep the schema") == command


def test_the_object_relays_waits_and_gives_the_figures(ctx: Producers) -> None:
    session_id = session_with(ctx, 20)
    relay = ctx.relay(session_id)
    queued = ctx.request_manual(session_id)
    drain(ctx)
    assert queued.request_id is not None
    final = ctx.wait_for_request(session_id, queued.request_id, timeout=5)  # published already
    kinds = [event.type for event in relay.events(timeout=1)]
    relay.close()
    assert final.type == "compaction_done" and final.request_id == queued.request_id
    assert kinds == ["compaction_start", "compaction_done", "token_update"]
    assert ctx.wait_for_compaction(session_id, timeout=1) is None  # nothing pending now

    ensured = ctx.ensure_compacted(session_id)  # compacted: no request, no wait
    assert ensured.status == "below_threshold" and ensured.event is None
    assert ensured.messages == [s.message for s in ctx.store.load_history(session_id)]
    stat_id = ctx.record_turn(session_id, ensured, USAGE, "gpt-test")
    stats = ctx.session_stats(session_id)
    assert stats["compactions"] == 1 and stats["lastRun"]["status"] == "succeeded"
    latest = stats["latestTurn"]
    assert (latest["id"], latest["decision"], latest["model"]) == (
        stat_id,
        "below_threshold",
        "gpt-test",
    )
    (item,) = [i for i in ctx.session_items() if i["id"] == session_id]
    assert item == ctx.session_item(ctx.store.session_listing(session_id), 1)
    assert item["usedTokens"] == stats["usedTokens"] == ensured.used_tokens


def test_the_asyncio_twin_waits_through_the_waiter_it_is_given(ctx: Producers) -> None:
    session_id = session_with(ctx, 20)
    twin = ctx.aio()
    waited: list[tuple[Producers, str, str]] = []

    async def waiter(given: Producers, sid: str, request_id: str, timeout: float) -> AnyEvent:
        """A gateway's own reader; here the job runs first, then the twin's own wait."""
        waited.append((given, sid, request_id))
        await asyncio.to_thread(run_queued, given)
        return await twin.wait_for_request(sid, request_id, timeout)

    async def scenario() -> tuple[Ensured, list[str]]:
        async with twin.relay(session_id) as relay:
            ensured = await twin.ensure_compacted(session_id, timeout=20, waiter=waiter)
            kinds: list[str] = [event.type async for event in relay.events(timeout=1)]
        return ensured, kinds

    ensured, kinds = asyncio.run(scenario())
    assert isinstance(twin, AsyncProducers) and twin.producers is ctx
    assert ensured.status == "compacted" and ensured.trigger.status == "enqueued"
    assert waited == [(ctx, session_id, ensured.trigger.request_id)]
    assert ensured.messages == [s.message for s in ctx.store.load_history(session_id)]
    assert kinds == ["compaction_start", "compaction_done", "token_update"]


def test_the_asyncio_twin_and_the_module_functions_agree(ctx: Producers) -> None:
    session_id = session_with(ctx, 20)
    twin = AsyncProducers(ctx)

    async def scenario() -> dict[str, Any]:
        checked = await twin.check_and_enqueue(session_id)
        return {
            "checked": checked,
            "again": await aio.check_and_enqueue(session_id, ctx=ctx),
            "manual": await twin.request_manual(session_id),
            "manual again": await aio.request_manual(session_id, ctx=ctx),
            "figures": await twin.token_update(session_id, usage=USAGE),
            "published": await aio.publish_token_update(session_id, usage=USAGE, ctx=ctx),
            "timed out": await aio.ensure_compacted(session_id, timeout=0.3, ctx=ctx),
            "stats": await twin.session_stats(session_id),
            "items": await twin.session_items(),
        }

    got = asyncio.run(scenario())
    checked, figures, published = got["checked"], got["figures"], got["published"]
    assert isinstance(figures, TokenUpdate) and isinstance(published, TokenUpdate)
    assert checked.status == "enqueued"
    assert (got["again"].status, got["again"].request_id) == ("already_pending", checked.request_id)
    assert isinstance(got["manual"], EnqueueResult) and got["manual"].status == "upgraded"
    assert got["manual again"].status == "already_pending"
    assert published == figures.model_copy(update={"timestamp": published.timestamp})
    assert got["timed out"].status == "timed_out"  # no worker runs
    assert got["stats"] == ctx.session_stats(session_id)
    assert [i for i in got["items"] if i["id"] == session_id] == [
        i for i in ctx.session_items() if i["id"] == session_id
    ]
