"""``EventRelay``: events for a gateway to forward to the user's screen (DESIGN §6).

It reads the capped event stream with blocking ``XREAD`` from the position it had when it was
constructed, so nothing published after that is missed; after a Redis restart it reconnects
with backoff and goes on from the last id it saw, replaying the gap. Blocking reads use a client
without a socket timeout (a blocked read is not a dead connection).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import Any

import redis
from pydantic import ValidationError

from compaction.contract import AnyEvent, events_stream, parse_event
from producers.context import Producers, default, text

log = logging.getLogger(__name__)

BLOCK_MS = 1_000
MAX_BACKOFF_S = 5.0


def stream_client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_timeout=None, socket_connect_timeout=5)


def last_stream_id(client: redis.Redis, stream: str) -> str:
    newest: Any = client.xrevrange(stream, count=1)
    return text(newest[0][0]) if newest else "0-0"


class EventRelay:
    """Subscribed once constructed; ``events()`` yields typed events (optionally of one
    session) until ``close()`` or the timeout."""

    def __init__(
        self,
        session_id: str | None = None,
        *,
        ctx: Producers | None = None,
        since: str | None = None,
    ) -> None:
        self.ctx = ctx or default()
        self.session_id = session_id
        self.stream = events_stream(self.ctx.settings.channel_prefix)
        self.client = stream_client(self.ctx.settings.redis_url)
        self.last_id = since or last_stream_id(self.client, self.stream)
        self._closed = threading.Event()

    def close(self) -> None:
        self._closed.set()
        self.client.close()

    def __enter__(self) -> EventRelay:
        return self

    def __exit__(self, *exc: object | TracebackType | None) -> None:
        self.close()

    def events(self, timeout: float | None = None) -> Iterator[AnyEvent]:
        deadline = None if timeout is None else time.monotonic() + timeout
        backoff = 0.1
        while not self._closed.is_set():
            block = block_ms(deadline)
            if block is None:
                return
            try:
                batches: Any = self.client.xread(
                    {self.stream: self.last_id}, count=100, block=block
                )
                backoff = 0.1
            except redis.ConnectionError as err:
                if self._closed.is_set():
                    return
                log.warning(
                    "event relay reconnecting",
                    extra={"fields": {"error": str(err), "backoff_s": backoff}},
                )
                self._closed.wait(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_S)
                continue
            self.last_id, events = read_batch(batches, self.session_id, self.last_id)
            yield from events

    def run(self, callback: Callable[[AnyEvent], None], timeout: float | None = None) -> None:
        """Hand every event to ``callback`` until closed (or the timeout)."""
        for event in self.events(timeout):
            callback(event)


def _event(fields: Any) -> AnyEvent | None:
    data = fields.get(b"event")
    if data is None:
        return None
    try:
        return parse_event(data)
    except ValidationError as err:
        log.warning("invalid event skipped", extra={"fields": {"error": str(err)[:200]}})
        return None


def block_ms(deadline: float | None) -> int | None:
    """How long the next blocking read may wait; ``None`` once the deadline has passed. Short
    waits keep ``close()`` and the timeout responsive."""
    if deadline is None:
        return BLOCK_MS
    left = deadline - time.monotonic()
    return None if left <= 0 else max(1, min(BLOCK_MS, int(left * 1000)))


def read_batch(batches: Any, session_id: str | None, last_id: str) -> tuple[str, list[AnyEvent]]:
    """The new position and the events of an ``XREAD`` reply (the session's only, when one is
    given). Every entry moves the position on, the invalid and the filtered ones too."""
    events = []
    for _stream, entries in batches or []:
        for entry_id, fields in entries:
            last_id = text(entry_id)
            event = _event(fields)
            if event is not None and session_id in (None, event.session_id):
                events.append(event)
    return last_id, events
