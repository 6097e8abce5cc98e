"""asyncio twins of the producers, for gateways built on an event loop.

``AsyncProducers`` (``producers.aio()``, or ``AsyncProducers(producers)``) has the methods of
``Producers``, awaitable. The store is synchronous SQLAlchemy, so the checks run in a worker
thread; the event relay reads the stream with ``redis.asyncio`` directly. ``ensure_compacted``
takes a ``waiter``: a gateway that already reads the events stream waits on its own reader
instead of a new connection. The module's functions take ``ctx`` (else the module's default) and
delegate to ``AsyncProducers``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from redis.exceptions import ConnectionError as RedisConnectionError

from compaction.core.contract import AnyEvent, TokenUpdate, TokenUsage
from compaction.core.messages import Message
from compaction.producers import commands, context, ensure
from compaction.producers.ensure import Ensured
from compaction.producers.recall import DEFAULT_TOKENS as DEFAULT_RECALL_TOKENS
from compaction.producers.trigger import TriggerResult
from compaction.producers.wait import RECENT, no_final_event
from compaction.service.events import StreamCursor, final_among, is_final_for, newest_id
from compaction.service.keys import events_stream
from compaction.service.queue import EnqueueResult, queued_or_running
from compaction.service.redis import async_stream_client
from compaction.store import SessionInfo, SessionListing

if TYPE_CHECKING:  # producers/context.py imports this module
    from compaction.producers.context import Producers
    from compaction.producers.drafts import AppliedDraft
    from compaction.store.drafts import DraftRecord

#: ``(ctx, session_id, request_id, timeout)`` → the request's final event; ``TimeoutError``
Waiter = Callable[["Producers", str, str, float], Awaitable[AnyEvent]]


class AsyncProducers:
    """The asyncio twin of one ``Producers``: its methods, awaitable (``parse_slash_command``
    stays a plain function), each a thread running the synchronous one or the same steps
    around a wait on the event loop."""

    parse_slash_command = staticmethod(commands.parse_slash_command)

    def __init__(self, producers: Producers) -> None:
        self.producers = producers

    async def ensure_compacted(
        self,
        session_id: str,
        *,
        model: str | None = None,
        messages: Sequence[Message] | None = None,
        system_prompt: str | None = None,
        timeout: float = 60.0,
        wait: bool = True,
        waiter: Waiter | None = None,
        info: SessionInfo | None = None,
    ) -> Ensured:
        """``Producers.ensure_compacted``, waiting on the event loop (through ``waiter`` when
        given)."""
        ctx = self.producers
        waiter = waiter or wait_for_request

        def check() -> tuple[TriggerResult, str | None, Ensured | None]:
            # one thread hop when nothing is awaited, the usual turn (docs/benchmarks.md,
            # "Overheads"): the check, the request to wait for, and what to send
            checked = ctx.check_and_enqueue(
                session_id, model=model, messages=messages, system_prompt=system_prompt, info=info
            )
            request_id = ensure.awaited_request(ctx, session_id, checked, wait=wait)
            if request_id is not None:
                return checked, request_id, None
            settled = ensure.settle(
                ctx,
                session_id,
                checked,
                event=None,
                waited=False,
                messages=messages,
                system_prompt=system_prompt,
            )
            return checked, None, settled

        checked, request_id, settled = await asyncio.to_thread(check)
        if settled is not None:
            return settled
        assert request_id is not None
        event: AnyEvent | None = None
        try:
            event = await waiter(ctx, session_id, request_id, timeout)
        except TimeoutError:
            event = None
        return await asyncio.to_thread(
            ensure.settle,
            ctx,
            session_id,
            checked,
            event=event,
            waited=True,
            messages=messages,
            system_prompt=system_prompt,
        )

    async def check_and_enqueue(
        self,
        session_id: str,
        *,
        model: str | None = None,
        messages: Sequence[Message] | None = None,
        system_prompt: str | None = None,
        info: SessionInfo | None = None,
    ) -> TriggerResult:
        return await asyncio.to_thread(
            self.producers.check_and_enqueue,
            session_id,
            model=model,
            messages=messages,
            system_prompt=system_prompt,
            info=info,
        )

    async def request_manual(
        self,
        session_id: str,
        *,
        focus: str | None = None,
        context_window: int | None = None,
        review: bool = False,
    ) -> EnqueueResult:
        return await asyncio.to_thread(
            self.producers.request_manual,
            session_id,
            focus=focus,
            context_window=context_window,
            review=review,
        )

    async def append_messages(
        self, session_id: str, messages: Sequence[Message], *, model: str | None = None
    ) -> list[int]:
        return await asyncio.to_thread(
            self.producers.append_messages, session_id, messages, model=model
        )

    async def wait_for_compaction(self, session_id: str, timeout: float = 60.0) -> AnyEvent | None:
        ctx = self.producers
        request_id = await asyncio.to_thread(
            queued_or_running, ctx.redis, ctx.settings.channel_prefix, session_id
        )
        if request_id is None:
            return None
        return await self.wait_for_request(session_id, request_id, timeout)

    async def wait_for_request(
        self, session_id: str, request_id: str, timeout: float = 60.0
    ) -> AnyEvent:
        """The final event of one request, even if it came before this call started."""
        async with self.relay(session_id) as relay:
            recent: Any = await relay.client.xrevrange(relay.stream, count=RECENT)
            found = final_among(recent, session_id, request_id)
            if found is not None:
                return found
            async for event in relay.events(timeout):
                if is_final_for(event, session_id, request_id):
                    return event
        raise TimeoutError(no_final_event(session_id, timeout))

    async def token_update(
        self,
        session_id: str,
        *,
        model: str | None = None,
        usage: TokenUsage | Mapping[str, int] | None = None,
        info: SessionInfo | None = None,
    ) -> TokenUpdate:
        return await asyncio.to_thread(
            self.producers.token_update, session_id, model=model, usage=usage, info=info
        )

    async def publish_token_update(
        self,
        session_id: str,
        *,
        model: str | None = None,
        usage: TokenUsage | Mapping[str, int] | None = None,
        info: SessionInfo | None = None,
    ) -> TokenUpdate:
        return await asyncio.to_thread(
            self.producers.publish_token_update, session_id, model=model, usage=usage, info=info
        )

    def relay(self, session_id: str | None = None) -> AsyncEventRelay:
        """An ``AsyncEventRelay`` on these resources: ``async with`` (or ``start()``)
        subscribes it."""
        return AsyncEventRelay(session_id, ctx=self.producers)

    async def pin(self, session_id: str, message_id: int) -> dict[str, Any]:
        return await asyncio.to_thread(self.producers.pin, session_id, message_id)

    async def unpin(self, session_id: str, message_id: int) -> dict[str, Any]:
        return await asyncio.to_thread(self.producers.unpin, session_id, message_id)

    async def recall(
        self, session_id: str, query: str, max_tokens: int = DEFAULT_RECALL_TOKENS
    ) -> dict[str, Any]:
        return await asyncio.to_thread(self.producers.recall, session_id, query, max_tokens)

    async def session_stats(self, session_id: str) -> dict[str, Any]:
        return await asyncio.to_thread(self.producers.session_stats, session_id)

    async def session_items(self, limit: int = 100) -> list[dict[str, Any]]:
        return await asyncio.to_thread(self.producers.session_items, limit)

    async def session_item(self, listed: SessionListing, compactions: int) -> dict[str, Any]:
        return await asyncio.to_thread(self.producers.session_item, listed, compactions)

    async def record_turn(
        self, session_id: str, ensured: Ensured, usage: TokenUsage, model: str | None
    ) -> int:
        return await asyncio.to_thread(
            self.producers.record_turn, session_id, ensured, usage, model
        )

    async def get_draft(self, draft_id: int) -> DraftRecord:
        return await asyncio.to_thread(self.producers.get_draft, draft_id)

    async def session_drafts(self, session_id: str) -> list[DraftRecord]:
        return await asyncio.to_thread(self.producers.session_drafts, session_id)

    async def edit_draft(self, draft_id: int, summary: str) -> DraftRecord:
        return await asyncio.to_thread(self.producers.edit_draft, draft_id, summary)

    async def discard_draft(self, draft_id: int) -> DraftRecord:
        return await asyncio.to_thread(self.producers.discard_draft, draft_id)

    async def apply_draft(self, draft_id: int) -> AppliedDraft:
        return await asyncio.to_thread(self.producers.apply_draft, draft_id)

    async def regenerate_draft(self, draft_id: int, *, focus: str | None = None) -> EnqueueResult:
        return await asyncio.to_thread(self.producers.regenerate_draft, draft_id, focus=focus)


class AsyncEventRelay:
    """``async for event in relay.events(): ...``; same contract as ``EventRelay``."""

    def __init__(self, session_id: str | None = None, *, ctx: Producers | None = None) -> None:
        self.ctx = ctx or context.default()
        self.session_id = session_id
        self.stream = events_stream(self.ctx.settings.channel_prefix)
        self.client = async_stream_client(self.ctx.settings.redis_url)
        self.last_id: str | None = None
        self._closed = asyncio.Event()

    async def start(self) -> AsyncEventRelay:
        """Fix the position: events published after this are delivered."""
        self.last_id = newest_id(await self.client.xrevrange(self.stream, count=1))
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
        cursor = StreamCursor(self.stream, self.last_id or "0-0", self.session_id, timeout)
        while not self._closed.is_set() and (block := cursor.block()) is not None:
            try:
                batches: Any = await self.client.xread(cursor.streams(), count=100, block=block)
            except RedisConnectionError as err:
                await asyncio.sleep(cursor.failed(err))
                continue
            for event in cursor.take(batches):
                self.last_id = cursor.last_id
                yield event
            self.last_id = cursor.last_id


# --- the module's functions: ``ctx``'s twin, else the default's ------------------------------


def _twin(ctx: Producers | None) -> AsyncProducers:
    return AsyncProducers(ctx or context.default())


async def check_and_enqueue(
    session_id: str,
    *,
    model: str | None = None,
    messages: Sequence[Message] | None = None,
    system_prompt: str | None = None,
    ctx: Producers | None = None,
) -> TriggerResult:
    return await _twin(ctx).check_and_enqueue(
        session_id, model=model, messages=messages, system_prompt=system_prompt
    )


async def request_manual(
    session_id: str,
    *,
    focus: str | None = None,
    context_window: int | None = None,
    review: bool = False,
    ctx: Producers | None = None,
) -> EnqueueResult:
    return await _twin(ctx).request_manual(
        session_id, focus=focus, context_window=context_window, review=review
    )


async def publish_token_update(
    session_id: str,
    *,
    model: str | None = None,
    usage: TokenUsage | Mapping[str, int] | None = None,
    ctx: Producers | None = None,
) -> TokenUpdate:
    return await _twin(ctx).publish_token_update(session_id, model=model, usage=usage)


async def wait_for_compaction(
    session_id: str, timeout: float = 60.0, *, ctx: Producers | None = None
) -> AnyEvent | None:
    return await _twin(ctx).wait_for_compaction(session_id, timeout)


async def wait_for_request(
    ctx: Producers, session_id: str, request_id: str, timeout: float = 60.0
) -> AnyEvent:
    """The final event of one request (the default ``Waiter``)."""
    return await AsyncProducers(ctx).wait_for_request(session_id, request_id, timeout)


async def ensure_compacted(
    session_id: str,
    *,
    model: str | None = None,
    messages: Sequence[Message] | None = None,
    system_prompt: str | None = None,
    timeout: float = 60.0,
    wait: bool = True,
    ctx: Producers | None = None,
    waiter: Waiter | None = None,
) -> Ensured:
    return await _twin(ctx).ensure_compacted(
        session_id,
        model=model,
        messages=messages,
        system_prompt=system_prompt,
        timeout=timeout,
        wait=wait,
        waiter=waiter,
    )
