"""Events on Redis (docs/architecture.md, "Events"): the publisher, and the one reading step
every relay shares.

Publishing writes the capped stream first (a relay that reconnects replays what it missed), then
the pub/sub channel for live listeners. The database stays the source of truth. Reading is
``read_batch``: the sync and asyncio relays, the waiters and the demo all turn an ``XREAD``
reply into typed events through it.
"""

from __future__ import annotations

import time
from typing import Any

import redis
from pydantic import ValidationError

from compaction.core.contract import AnyEvent, Wire, is_final, parse_event
from compaction.core.errors import one_line
from compaction.service import logs
from compaction.service.keys import events_channel, events_stream
from compaction.service.redis import text

log = logs.get_logger(__name__)

#: the longest a blocking read waits, so ``close()`` and timeouts stay responsive
BLOCK_MS = 1_000
#: the longest wait between two reconnection attempts
MAX_BACKOFF_S = 5.0


class EventPublisher:
    def __init__(
        self, client: redis.Redis, *, prefix: str = "compaction", stream_maxlen: int = 10_000
    ) -> None:
        self.client = client
        self.channel = events_channel(prefix)
        self.stream = events_stream(prefix)
        self.maxlen = stream_maxlen

    def publish(self, event: Wire) -> bool:
        """Stream first, then channel: a relay that sees the live message can also find it in
        the stream. A Redis failure is logged, not raised: the history is already written."""
        data = event.to_json()
        try:
            pipe = self.client.pipeline(transaction=False)
            pipe.xadd(self.stream, {"event": data}, maxlen=self.maxlen, approximate=True)
            pipe.publish(self.channel, data)
            pipe.execute()
        except redis.RedisError as err:
            log.error("event not published", event_json=data[:200], error=str(err))
            return False
        return True


def entry_event(fields: Any) -> AnyEvent | None:
    """The typed event of one stream entry; ``None`` (logged) when it holds none or a bad one."""
    data = fields.get(b"event") if fields else None
    if data is None:
        return None
    try:
        return parse_event(data)
    except ValidationError as err:
        log.warning("invalid event skipped", error=one_line(err))
        return None


def read_batch(batches: Any, session_id: str | None, last_id: str) -> tuple[str, list[AnyEvent]]:
    """The new position and the events of an ``XREAD`` reply (the session's only, when one is
    given). Every entry moves the position on, the invalid and the filtered ones too."""
    events = []
    for _stream, entries in batches or []:
        for entry_id, fields in entries:
            last_id = text(entry_id)
            event = entry_event(fields)
            if event is not None and session_id in (None, event.session_id):
                events.append(event)
    return last_id, events


def block_ms(deadline: float | None) -> int | None:
    """How long the next blocking read may wait; ``None`` once the deadline has passed."""
    if deadline is None:
        return BLOCK_MS
    left = deadline - time.monotonic()
    return None if left <= 0 else max(1, min(BLOCK_MS, int(left * 1000)))


def newest_id(reply: Any) -> str:
    """The position of an ``XREVRANGE stream + - COUNT 1`` reply: events after it are new."""
    return text(reply[0][0]) if reply else "0-0"


def is_final_for(event: AnyEvent, session_id: str, request_id: str) -> bool:
    """Whether ``event`` ends ``request_id`` of ``session_id`` (``"unknown"``: any request)."""
    return (
        is_final(event)
        and event.session_id == session_id
        and (request_id == "unknown" or event.request_id == request_id)
    )


def final_among(recent: Any, session_id: str, request_id: str) -> AnyEvent | None:
    """The final event of the request among recent stream entries (``XREVRANGE``), if any."""
    for _entry, fields in recent or []:
        event = entry_event(fields)
        if event is not None and is_final_for(event, session_id, request_id):
            return event
    return None


def next_backoff(backoff: float) -> float:
    """Exponential, capped at ``MAX_BACKOFF_S``."""
    return min(backoff * 2, MAX_BACKOFF_S)


class StreamCursor:
    """One relay's reading state: its position in the stream, its deadline and its reconnect
    backoff. The sync and asyncio relays differ only in how they call ``XREAD``."""

    def __init__(
        self, stream: str, last_id: str, session_id: str | None, timeout: float | None
    ) -> None:
        self.stream = stream
        self.last_id = last_id
        self.session_id = session_id
        self.deadline = None if timeout is None else time.monotonic() + timeout
        self.backoff = 0.1

    def block(self) -> int | None:
        """Milliseconds the next read may block; ``None`` once the deadline has passed."""
        return block_ms(self.deadline)

    def streams(self) -> dict[Any, Any]:
        """The ``streams`` argument of the next ``XREAD``."""
        return {self.stream: self.last_id}

    def take(self, batches: Any) -> list[AnyEvent]:
        """The events of a successful read; the position moves past every entry."""
        self.backoff = 0.1
        self.last_id, events = read_batch(batches, self.session_id, self.last_id)
        return events

    def failed(self, err: Exception) -> float:
        """After a lost connection: how long to wait before reading again."""
        wait, self.backoff = self.backoff, next_backoff(self.backoff)
        log.warning("event relay reconnecting", error=str(err), backoff_s=wait)
        return wait
