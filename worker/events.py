"""Publishing events (DESIGN §6): the pub/sub channel for live relays, and a capped stream so a
relay that reconnects can replay what it missed. The database stays the source of truth."""

from __future__ import annotations

import logging

import redis

from compaction.contract import Wire, events_channel, events_stream

log = logging.getLogger(__name__)


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
            log.error("event not published", extra={"event": data[:200], "error": str(err)})
            return False
        return True
