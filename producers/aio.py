"""asyncio twins of the producers, for gateways built on an event loop.

The store is synchronous SQLAlchemy, so the checks run in a worker thread; the event relay reads
the stream with ``redis.asyncio`` directly.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError

from compaction.contract import AnyEvent, TokenUpdate, TokenUsage, events_stream
from compaction.messages import Message
from producers import tokens, trigger
from producers.context import Producers, default, text
from producers.enqueue import EnqueueResult, pending_request, running_request
from producers.relay import MAX_BACKOFF_S, _event, block_ms, read_batch
from producers.trigger import TriggerResult
from producers.wait import is_final_for

log = logging.getLogger(__name__)


async def check_and_enqueue(
    session_id: str,
    *,
    model: str | None = None,
    messages: Sequence[Message] | None = None,
    system_prompt: str | None = None,
) -> TriggerResult:
    return await asyncio.to_thread(
        trigger.check_and_enqueue,
        default(),
        session_id,
        model=model,
        messages=messages,
        system_prompt=system_prompt,
    )


async def request_manual(
    session_id: str, *, focus: str | None = None, context_window: int | None = None
) -> EnqueueResult:
    return await asyncio.to_thread(
        trigger.request_manual, default(), session_id, focus=focus, context_window=context_window
    )


async def publish_token_update(
    session_id: str,
    *,
    model: str | None = None,
    usage: TokenUsage | Mapping[str, int] | None = None,
) -> TokenUpdate:
    return await asyncio.to_thread(
        tokens.publish_token_update, default(), session_id, model=model, usage=usage
    )


class AsyncEventRelay:
    """``async for event in relay.events(): ...``; same contract as ``EventRelay``."""

    def __init__(self, session_id: str | None = None, *, ctx: Producers | None = None) -> None:
        self.ctx = ctx or default()
        self.session_id = session_id
        self.stream = events_stream(self.ctx.settings.channel_prefix)
        self.client = aioredis.Redis.from_url(
            self.ctx.settings.redis_url, socket_timeout=None, socket_connect_timeout=5
        )
        self.last_id: str | None = None
        self._closed = asyncio.Event()

    async def start(self) -> AsyncEventRelay:
        """Fix the position: events published after this are delivered."""
        newest: Any = await self.client.xrevrange(self.stream, count=1)
        self.last_id = text(newest[0][0]) if newest else "0-0"
        return self

    async def __aenter__(self) -> AsyncEventRelay:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        self._closed.set()
        await self.client.aclose()

    async def events(self, timeout: float | None = None) -> AsyncIterator[AnyEvent]:
        if self.last_id is None:
            await self.start()
        deadline = None if timeout is None else time.monotonic() + timeout
        backoff = 0.1
        while not self._closed.is_set():
            block = block_ms(deadline)
            if block is None:
                return
            try:
                batches: Any = await self.client.xread(
                    {self.stream: self.last_id or "0-0"}, count=100, block=block
                )
                backoff = 0.1
            except RedisConnectionError as err:
                log.warning("event relay reconnecting", extra={"fields": {"error": str(err)}})
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_S)
                continue
            self.last_id, events = read_batch(batches, self.session_id, self.last_id or "0-0")
            for event in events:
                yield event


async def wait_for_compaction(session_id: str, timeout: float = 60.0) -> AnyEvent | None:
    ctx = default()
    request_id = await asyncio.to_thread(
        lambda: pending_request(ctx, session_id) or running_request(ctx, session_id)
    )
    if request_id is None:
        return None
    async with AsyncEventRelay(session_id, ctx=ctx) as relay:
        recent: Any = await relay.client.xrevrange(relay.stream, count=500)
        for _entry, fields in recent or []:
            event = _event(fields)
            if event is not None and is_final_for(event, session_id, request_id):
                return event
        async for event in relay.events(timeout):
            if is_final_for(event, session_id, request_id):
                return event
    raise TimeoutError(f"no final event for session {session_id!r} within {timeout:g} s")
