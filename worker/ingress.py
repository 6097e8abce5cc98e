"""The language-neutral way in (docs/architecture.md, "The job"): gateways in other languages
``XADD`` a ``compaction_requested`` JSON entry (one field, ``payload``) to ``compaction:requests``;
this reads it in the consumer group ``compaction-ingress`` and enqueues the job.

An invalid entry is acknowledged, copied to ``compaction:requests:dead`` with the reason, and
answered with ``compaction_failed`` (``invalid_request``, with the session and request ids when
they can be read). The ingress never stops for one entry, and rides out Redis restarts.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from typing import Any

import redis
from pydantic import ValidationError

from compaction.contract import (
    CompactionFailed,
    CompactionRequested,
    CompactionSkipped,
    valid_session_id,
)
from compaction.errors import SkipCode, invalid_request
from service import logs
from service.events import EventPublisher
from service.keys import dead_stream, requests_stream
from service.queue import submit
from service.redis import stream_client
from service.settings import Settings

log = logs.get_logger(__name__)

GROUP = "compaction-ingress"
MAX_BACKOFF_S = 5.0


class Ingress:
    def __init__(
        self,
        settings: Settings,
        redis_client: redis.Redis,
        *,
        consumer: str | None = None,
        block_ms: int = 2_000,
    ) -> None:
        self.settings, self.redis = settings, redis_client
        prefix = settings.channel_prefix
        self.stream, self.dead = requests_stream(prefix), dead_stream(prefix)
        self.consumer = consumer or f"{socket.gethostname()}-{os.getpid()}"
        self.block_ms = block_ms
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
        """Until ``stop`` is set. First the entries this consumer took but never acknowledged
        (it died mid-way), then new ones."""
        backoff = 0.1
        position = "0"
        while not self.stop.is_set():
            try:
                self.ensure_group()
                batches: Any = self.client.xreadgroup(
                    GROUP,
                    self.consumer,
                    {self.stream: position},
                    count=50,
                    block=self.block_ms,
                )
                backoff = 0.1
            except redis.ConnectionError as err:
                log.warning("ingress reconnecting", error=str(err))
                self.stop.wait(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_S)
                continue
            entries = [e for _stream, items in batches or [] for e in items]
            if position == "0" and not entries:
                position = ">"  # backlog done: only new entries from here on
            for entry_id, fields in entries:
                self.handle(entry_id, fields or {})

    def handle(self, entry_id: bytes | str, fields: dict[bytes, bytes]) -> None:
        raw = fields.get(b"payload")
        try:
            request = CompactionRequested.model_validate_json(raw or b"")
        except ValidationError as err:
            self._dead(entry_id, raw, err)
        else:
            try:
                outcome = submit(self.redis, self.settings, request)
            except redis.ConnectionError:
                return  # not acknowledged: read again after reconnecting
            if outcome.status != "enqueued":
                code: SkipCode = "lock_held" if outcome.status == "in_flight" else "already_pending"
                self.publisher.publish(
                    CompactionSkipped(
                        session_id=request.session_id,
                        request_id=request.request_id,
                        reason=request.reason,
                        code=code,
                        detail=f"request {outcome.request_id} is {outcome.status}",
                    )
                )
            log.info(
                "ingress", entry=str(entry_id), status=outcome.status, session=request.session_id
            )
        self.client.xack(self.stream, GROUP, entry_id)

    def _dead(self, entry_id: bytes | str, raw: bytes | None, err: ValidationError) -> None:
        reason = invalid_request(err, "compaction_requested").message
        self.client.xadd(
            self.dead,
            {"payload": raw or b"", "reason": reason, "entry": str(entry_id)},
            maxlen=10_000,
            approximate=True,
        )
        session_id, request_id = _ids(raw)
        log.warning("ingress: invalid entry", entry=str(entry_id), reason=reason)
        if session_id is not None:
            self.publisher.publish(
                CompactionFailed(
                    session_id=session_id,
                    request_id=request_id,
                    error=reason,
                    code="invalid_request",
                )
            )


def _ids(raw: bytes | None) -> tuple[str | None, str | None]:
    """The session and request ids of a broken entry, when they can be read at all."""
    try:
        data = json.loads(raw or b"")
    except ValueError:
        return None, None
    if not isinstance(data, dict):
        return None, None
    session_id, request_id = data.get("sessionId"), data.get("requestId")
    return (
        session_id if valid_session_id(session_id) else None,
        request_id if isinstance(request_id, str) else None,
    )
