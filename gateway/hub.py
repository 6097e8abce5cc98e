"""The event hub (docs/architecture.md, "The gateway"): one reader of the events stream per
gateway process, fanning each event out to the subscribers of its session, so a thousand open
sockets cost one Redis connection, not a thousand.

The reader is a blocking ``XREAD`` loop on the stream (``service.events.StreamCursor``, as
``producers.aio.AsyncEventRelay`` reads it), reconnecting with backoff when Redis goes away.
Each subscriber has a bounded queue: one that falls behind (a stalled socket) is ended, never
waited for, so it cannot hold up the others. The messages a gateway stores reach every gateway
(``share``, then ``deliver_here``): this process's subscribers at once, the others' through the
messages stream, which the same ``XREAD`` reads beside the events (a process skips the entries
it wrote).

``wait_for_request`` is a turn's wait for a running compaction on this same reader (the
``waiter`` of ``AsyncProducers.ensure_compacted``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import redis
import redis.asyncio as aioredis
from redis.exceptions import RedisError
from redis.typing import EncodableT, FieldT

from compaction.core.contract import AnyEvent
from compaction.producers.context import Producers
from compaction.producers.wait import RECENT, no_final_event
from compaction.service import logs
from compaction.service.events import StreamCursor, final_among, is_final_for, newest_id
from compaction.service.keys import events_stream, messages_stream
from compaction.service.redis import async_stream_client, text
from compaction.service.settings import Settings

log = logs.get_logger(__name__)

#: deliveries a subscriber may have waiting; one further behind is ended (docs/architecture.md,
#: "The gateway": a slow socket is closed, it reconnects and reloads the history)
QUEUE_SIZE = 256
#: entries one ``XREAD`` returns at most
BATCH = 100
#: how long start-up waits for the stream before serving anyway
START_WAIT_S = 5.0
#: entries the messages stream keeps (about): it serves the live sockets, and a gateway whose
#: Redis connection came back replays what it missed from it
MESSAGES_MAXLEN = 1_000


@dataclass(frozen=True, slots=True)
class Delivery:
    """One JSON object for the session's clients (``text``: encoded once, however many
    clients); ``event`` when it is a stream event."""

    data: dict[str, Any]
    event: AnyEvent | None = None
    text: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", json.dumps(self.data, ensure_ascii=False))

    @property
    def type(self) -> str:
        return str(self.data.get("type", "message"))


@dataclass(eq=False)
class Subscription:
    """One client's view of a session: ``await next()`` gives the next delivery, ``None`` once
    the subscription has ended (the client fell behind, or the gateway is stopping)."""

    session_id: str
    queue: asyncio.Queue[Delivery | None] = field(
        default_factory=lambda: asyncio.Queue(QUEUE_SIZE + 1)
    )
    #: set when the subscription ends (a client stuck in a send learns it here)
    stopped: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def ended(self) -> bool:
        return self.stopped.is_set()

    def offer(self, delivery: Delivery) -> bool:
        """Queue ``delivery`` without waiting; a full queue ends the subscription."""
        if self.ended:
            return False
        if self.queue.qsize() >= QUEUE_SIZE:
            self.end()
            return False
        self.queue.put_nowait(delivery)
        return True

    def end(self) -> None:
        """What is still queued is dropped: the client reloads the history after this."""
        if self.ended:
            return
        self.stopped.set()
        while not self.queue.empty():
            self.queue.get_nowait()
        self.queue.put_nowait(None)

    async def next(self) -> Delivery | None:
        return await self.queue.get()


class Hub:
    def __init__(self, settings: Settings, client: aioredis.Redis | None = None) -> None:
        self.settings = settings
        self.stream = events_stream(settings.channel_prefix)
        self.messages = messages_stream(settings.channel_prefix)
        #: names this process's entries in the messages stream
        self.origin = uuid.uuid4().hex
        self._client = client
        self._owned = client is None
        self._subscribers: dict[str, set[Subscription]] = {}
        self._task: asyncio.Task[None] | None = None
        #: set once the reader has its position: events published after it are delivered
        self.ready = asyncio.Event()
        #: the reader's position in the messages stream
        self._messages_at = "0-0"

    async def start(self) -> None:
        """Start reading, and wait (``START_WAIT_S`` at most: Redis may be away) for the
        reader's position, so that a client served after start-up misses nothing."""
        if self._task is None:
            self._task = asyncio.create_task(self._read(), name="gateway-event-hub")
        try:
            async with asyncio.timeout(START_WAIT_S):
                await self.ready.wait()
        except TimeoutError:
            log.warning("event hub not reading yet", stream=self.stream)

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for subscribers in list(self._subscribers.values()):
            for subscription in list(subscribers):
                subscription.end()
        self._subscribers.clear()
        if self._owned and self._client is not None:
            await self._client.aclose()
            self._client = None

    @contextlib.contextmanager
    def subscribe(self, session_id: str) -> Iterator[Subscription]:
        subscription = Subscription(session_id)
        self._subscribers.setdefault(session_id, set()).add(subscription)
        try:
            yield subscription
        finally:
            subscribers = self._subscribers.get(session_id)
            if subscribers is not None:
                subscribers.discard(subscription)
                if not subscribers:
                    del self._subscribers[session_id]

    @property
    def running(self) -> bool:
        return self._task is not None

    def subscribers(self, session_id: str) -> int:
        return len(self._subscribers.get(session_id, ()))

    def share(self, session_id: str, delivery: Delivery, *, via: redis.Redis) -> None:
        """``delivery`` for the other gateways' clients: the messages stream, written with
        ``via`` (a command client: the hub's own connection waits in ``XREAD``). Blocking: a
        turn calls it in the worker thread that stored the message, one thread hop less
        (docs/benchmarks.md, "Overheads"), then ``deliver_here`` on the event loop. A Redis
        failure is logged, not raised: the message is stored, and the other gateways' clients
        see it when they reload, as for an event (docs/architecture.md, "Events")."""
        fields: dict[FieldT, EncodableT] = {
            "origin": self.origin,
            "session": session_id,
            "data": delivery.text,
        }
        try:
            via.xadd(self.messages, fields, maxlen=MESSAGES_MAXLEN, approximate=True)
        except RedisError as err:
            log.error("message not shared", session_id=session_id, error=str(err))

    def deliver_here(self, session_id: str, delivery: Delivery) -> None:
        """``delivery`` for this process's clients of the session (on the event loop)."""
        self._fan_out(session_id, delivery)

    def _fan_out(self, session_id: str, delivery: Delivery) -> None:
        for subscription in list(self._subscribers.get(session_id, ())):
            if not subscription.offer(delivery):
                log.warning("slow subscriber ended", session_id=session_id)

    async def _read(self) -> None:
        if self._client is None:
            self._client = async_stream_client(self.settings.redis_url)
        client = self._client
        cursor = StreamCursor(self.stream, "0-0", None, None)
        positioned = False
        while True:
            try:
                if not positioned:
                    cursor.last_id = newest_id(await client.xrevrange(self.stream, count=1))
                    self._messages_at = newest_id(await client.xrevrange(self.messages, count=1))
                    positioned = True
                    self.ready.set()
                streams = {**cursor.streams(), self.messages: self._messages_at}
                block = cursor.block()
                batches: Any = await client.xread(streams, count=BATCH, block=block)
            except RedisError as err:  # Redis away or failing: read again after a while
                await asyncio.sleep(cursor.failed(err))
                continue
            self._deliver(cursor, batches)

    def _deliver(self, cursor: StreamCursor, batches: Any) -> None:
        """The entries of one read, both streams merged in the order Redis wrote them (an id is
        its time; on a tie, the message first: a reply is written before its ``token_update``)."""
        cursor.take([])  # a read that succeeded: a later failure's backoff starts over
        entries = [
            (_position(entry_id), text(stream) != self.messages, text(stream), entry_id, fields)
            for stream, items in batches or []
            for entry_id, fields in items
        ]
        for _at, _event_first, stream, entry_id, fields in sorted(entries, key=lambda e: e[:2]):
            if stream == self.messages:
                self._messages_at = text(entry_id)
                self._shared(fields)
                continue
            for event in cursor.take([(stream, [(entry_id, fields)])]):
                self._fan_out(event.session_id, Delivery(event.to_wire(), event))

    def _shared(self, fields: dict[bytes, bytes]) -> None:
        """A message another gateway stored; this process's own were delivered already."""
        if fields.get(b"origin", b"").decode() == self.origin:
            return
        try:
            session_id, data = fields[b"session"].decode(), json.loads(fields[b"data"])
        except (KeyError, UnicodeDecodeError, ValueError) as err:
            log.warning("invalid shared message skipped", error=type(err).__name__)
            return
        if isinstance(data, dict):
            self._fan_out(session_id, Delivery(data))

    async def wait_for_request(
        self, ctx: Producers, session_id: str, request_id: str, timeout: float
    ) -> AnyEvent:
        """The final event of one request, even one published before this call (the stream's
        recent entries are searched after subscribing, so nothing falls between the two)."""
        with self.subscribe(session_id) as subscription:
            try:
                async with asyncio.timeout(timeout):
                    await self.ready.wait()  # from here on, nothing published is missed
                    recent = await asyncio.to_thread(ctx.redis.xrevrange, self.stream, count=RECENT)
                    found = final_among(recent, session_id, request_id)
                    if found is not None:
                        return found
                    while (delivery := await subscription.next()) is not None:
                        event = delivery.event
                        if event is not None and is_final_for(event, session_id, request_id):
                            return event
            except TimeoutError:
                pass
        raise TimeoutError(no_final_event(session_id, timeout))


def _position(entry_id: bytes | str) -> tuple[int, int]:
    """A stream entry id (``"<ms>-<seq>"``) as numbers, to order two streams' entries."""
    ms, _sep, seq = text(entry_id).partition("-")
    return int(ms), int(seq or 0)
