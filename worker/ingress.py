"""The language-neutral way in (docs/architecture.md, "The job"): gateways in other languages
``XADD`` a ``compaction_requested`` JSON entry (one field, ``payload``) to ``compaction:requests``;
this reads it in the consumer group ``compaction-ingress`` and enqueues the job.

Whatever an entry holds, it is acknowledged and deleted from the stream once handled. An invalid
one is copied to ``compaction:requests:dead`` (its payload capped) with the reason, and answered
with ``compaction_failed`` (``invalid_request``; ``internal_error`` for a bug) where its session
id can be read. Only a lost connection leaves an entry pending, to be read again. The ingress
never stops for one entry, rides out Redis restarts, and takes over the entries an ingress that
died had read.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from typing import Any

import redis

from compaction.core.contract import (
    CompactionFailed,
    CompactionRequested,
    CompactionSkipped,
    parse_request,
    readable_ids,
)
from compaction.core.errors import CompactionError, InvalidRequest, SkipCode, as_invalid_request
from compaction.service import logs
from compaction.service.events import EventPublisher
from compaction.service.keys import dead_stream, requests_stream
from compaction.service.queue import submit
from compaction.service.redis import stream_client, text
from compaction.service.settings import Settings

log = logs.get_logger(__name__)

GROUP = "compaction-ingress"
MAX_BACKOFF_S = 5.0
#: an entry another consumer read this long ago and never acknowledged is taken over: the
#: consumer died (its name, host and pid, died with it)
CLAIM_IDLE_MS = 30_000
#: what a dead letter keeps (docs/architecture.md, "Redis keys"): Redis memory stays bounded
DEAD_MAXLEN, DEAD_PAYLOAD_BYTES, REASON_CHARS = 10_000, 4_096, 300
#: the errors after which an entry is read again rather than answered
TRANSPORT_ERRORS = (redis.ConnectionError, redis.TimeoutError)


class Ingress:
    def __init__(
        self,
        settings: Settings,
        redis_client: redis.Redis,
        *,
        consumer: str | None = None,
        block_ms: int = 2_000,
        claim_idle_ms: int = CLAIM_IDLE_MS,
    ) -> None:
        self.settings, self.redis = settings, redis_client
        prefix = settings.channel_prefix
        self.stream, self.dead = requests_stream(prefix), dead_stream(prefix)
        self.consumer = consumer or f"{socket.gethostname()}-{os.getpid()}"
        self.block_ms, self.claim_idle_ms = block_ms, claim_idle_ms
        # Blocking reads: no socket timeout on this client.
        self.client = stream_client(settings.redis_url)
        self.publisher = EventPublisher(
            redis_client, prefix=prefix, stream_maxlen=settings.events_stream_maxlen
        )
        self.stop = threading.Event()

    def ensure_group(self) -> None:
        try:
            self.client.xgroup_create(self.stream, GROUP, id="0", mkstream=True)
        except redis.ResponseError as err:
            if "BUSYGROUP" not in str(err):
                raise

    def run(self) -> None:
        """Until ``stop`` is set. First the entries this consumer holds unacknowledged (taken
        over from a dead one, or cut short by a lost connection), then new ones."""
        backoff = 0.1
        position = "0"
        while not self.stop.is_set():
            try:
                if position == "0":
                    self.ensure_group()
                    self._claim()
                entries = self._read(position)
                if position == "0" and not entries:
                    position = ">"  # backlog done: only new entries from here on
                for entry_id, fields in entries:
                    self.handle(entry_id, fields or {})
                backoff = 0.1
            except redis.RedisError as err:
                log.warning("ingress: redis failed, reading again", error=str(err))
                self.stop.wait(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_S)
                position = "0"

    def _read(self, position: str) -> list[tuple[bytes, dict[bytes, bytes] | None]]:
        batches: Any = self.client.xreadgroup(
            GROUP, self.consumer, {self.stream: position}, count=50, block=self.block_ms
        )
        return [entry for _stream, items in batches or [] for entry in items]

    def _claim(self) -> None:
        """Handle the entries another consumer read and never acknowledged: it died."""
        start: Any = "0-0"
        while True:
            start, entries, *_ = self.client.xautoclaim(
                self.stream, GROUP, self.consumer, self.claim_idle_ms, start, count=50
            )
            for entry_id, fields in entries:
                self.handle(entry_id, fields or {})
            if text(start) == "0-0":
                return

    def handle(self, entry_id: bytes | str, fields: dict[bytes, bytes]) -> None:
        """One entry, whatever it holds; a lost connection propagates (the entry stays pending
        and is read again)."""
        entry = text(entry_id)
        raw = fields.get(b"payload")
        try:
            self._submit(entry, _request(raw))
        except TRANSPORT_ERRORS:
            raise
        except CompactionError as err:
            self._dead(entry, raw, err)
        except Exception as err:  # a bug must not stop the ingress nor lose the entry
            log.exception("ingress: unexpected error", entry=entry)
            self._dead(entry, raw, CompactionError(f"{type(err).__name__}: {err}"))
        with self.client.pipeline() as pipe:  # handled: nothing left of it in the stream
            pipe.xack(self.stream, GROUP, entry)
            pipe.xdel(self.stream, entry)
            pipe.execute()

    def _submit(self, entry: str, request: CompactionRequested) -> None:
        """This request's own final event when it is not queued: the gateway learns which
        request covers it (an upgraded one runs with this one's focus, as a manual request)."""
        outcome = submit(self.redis, self.settings, request)
        if outcome.status != "enqueued":
            code: SkipCode = "lock_held" if outcome.status == "in_flight" else "already_pending"
            detail = f"request {outcome.request_id} is {outcome.status}"
            if outcome.status == "upgraded":
                detail = f"request {outcome.request_id} is queued and now runs as this one asks"
            self.publisher.publish(
                CompactionSkipped(
                    session_id=request.session_id,
                    request_id=request.request_id,
                    reason=request.reason,
                    code=code,
                    detail=detail,
                )
            )
        log.info("ingress", entry=entry, status=outcome.status, session=request.session_id)

    def _dead(self, entry: str, raw: bytes | None, err: CompactionError) -> None:
        reason = _capped(err.message)
        payload = raw or b""
        self.client.xadd(
            self.dead,
            {
                "payload": payload[:DEAD_PAYLOAD_BYTES],
                "size": len(payload),
                "reason": reason,
                "entry": entry,
            },
            maxlen=DEAD_MAXLEN,
            approximate=True,
        )
        session_id, request_id = _ids(raw)
        log.warning("ingress: invalid entry", entry=entry, code=err.code, reason=reason)
        if session_id is not None:
            self.publisher.publish(
                CompactionFailed(
                    session_id=session_id, request_id=request_id, error=reason, code=err.code
                )
            )


def _request(raw: bytes | None) -> CompactionRequested:
    if raw is None:
        raise InvalidRequest("invalid entry: no payload field")
    with as_invalid_request("compaction_requested"):
        return parse_request(raw)


def _capped(reason: str) -> str:
    """One line of at most ``REASON_CHARS``: a hostile field name can make a reason huge."""
    line = reason.replace("\n", " ")
    return line if len(line) <= REASON_CHARS else f"{line[: REASON_CHARS - 3]}..."


def _ids(raw: bytes | None) -> tuple[str | None, str | None]:
    """The session and request ids of a broken entry, when they can be read at all."""
    try:
        return readable_ids(json.loads(raw or b""))
    except ValueError:  # not JSON, not UTF-8
        return None, None
