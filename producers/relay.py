"""``EventRelay``: events for a gateway to forward to the user's screen (docs/architecture.md,
"Events").

It reads the capped event stream with blocking ``XREAD`` from the position it had when it was
constructed, so nothing published after that is missed; after a Redis restart it reconnects
with backoff and goes on from the last id it saw, replaying the gap. The reading step is
``service.events.StreamCursor``, shared with the asyncio relay.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import TYPE_CHECKING, Any

import redis

from compaction.core.contract import AnyEvent
from compaction.producers import context
from compaction.service.events import StreamCursor, newest_id
from compaction.service.keys import events_stream
from compaction.service.redis import stream_client

if TYPE_CHECKING:  # producers/context.py imports this module
    from compaction.producers.context import Producers


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
        self.ctx = ctx or context.default()
        self.session_id = session_id
        self.stream = events_stream(self.ctx.settings.channel_prefix)
        self.client = stream_client(self.ctx.settings.redis_url)
        self.last_id = since or newest_id(self.client.xrevrange(self.stream, count=1))
        self._closed = threading.Event()

    def close(self) -> None:
        self._closed.set()
        self.client.close()

    def __enter__(self) -> EventRelay:
        return self

    def __exit__(self, *exc: object | TracebackType | None) -> None:
        self.close()

    def events(self, timeout: float | None = None) -> Iterator[AnyEvent]:
        cursor = StreamCursor(self.stream, self.last_id, self.session_id, timeout)
        while not self._closed.is_set() and (block := cursor.block()) is not None:
            try:
                batches: Any = self.client.xread(cursor.streams(), count=100, block=block)
            except redis.ConnectionError as err:
                if not self._closed.is_set():
                    self._closed.wait(cursor.failed(err))
                continue
            events = cursor.take(batches)
            self.last_id = cursor.last_id
            yield from events

    def run(self, callback: Callable[[AnyEvent], None], timeout: float | None = None) -> None:
        """Hand every event to ``callback`` until closed (or the timeout)."""
        for event in self.events(timeout):
            callback(event)
