"""Enqueueing compaction jobs (docs/architecture.md, "The job"): RQ's JSON serializer, never
pickle; a pending key so a second request does not queue behind one already queued; nothing
queued while a compaction of the session runs. The producers and the ingress both enqueue here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import redis
from rq import Queue
from rq.job import Job
from rq.serializers import JSONSerializer

from compaction.contract import CompactionRequested
from service.keys import JOB_FUNCTION, job_id, lock_key, pending_key, token_request
from service.redis import text
from service.settings import Settings

EnqueueStatus = Literal["enqueued", "already_pending", "in_flight"]


@dataclass(frozen=True, slots=True)
class EnqueueResult:
    status: EnqueueStatus
    #: this request's id when enqueued; the queued or running one's otherwise
    request_id: str | None


def compaction_queue(client: redis.Redis, name: str = "compaction") -> Queue:
    return Queue(name, connection=client, serializer=JSONSerializer)


def enqueue(queue: Queue, request: CompactionRequested, *, timeout_s: int) -> Job:
    """The job's id is derived from the session and request ids, so a request is queued at
    most once (docs/architecture.md, "The job")."""
    return queue.enqueue_call(
        JOB_FUNCTION,
        args=(request.to_wire(),),
        timeout=timeout_s,
        job_id=job_id(request.session_id, request.request_id),
        result_ttl=3_600,
        failure_ttl=86_400,
        description=f"compaction {request.reason} {request.session_id}",
    )


def running_request(client: redis.Redis, prefix: str, session_id: str) -> str | None:
    """The request id of the compaction running now (from the lock's token), if any."""
    token = client.get(lock_key(prefix, session_id))
    return None if token is None else token_request(text(token))


def pending_request(client: redis.Redis, prefix: str, session_id: str) -> str | None:
    """The request id queued for the session and not yet taken by a worker, if any."""
    value = client.get(pending_key(prefix, session_id))
    return None if value is None else text(value)


def queued_or_running(client: redis.Redis, prefix: str, session_id: str) -> str | None:
    """The request a gateway would wait for: the queued one, else the running one."""
    return pending_request(client, prefix, session_id) or running_request(
        client, prefix, session_id
    )


def submit(client: redis.Redis, settings: Settings, request: CompactionRequested) -> EnqueueResult:
    prefix = settings.channel_prefix
    running = running_request(client, prefix, request.session_id)
    if running is not None:
        return EnqueueResult("in_flight", running)
    key = pending_key(prefix, request.session_id)
    if not client.set(key, request.request_id, nx=True, ex=settings.pending_ttl_s):
        return EnqueueResult("already_pending", pending_request(client, prefix, request.session_id))
    try:
        enqueue(
            compaction_queue(client, settings.queue_name), request, timeout_s=settings.job_timeout_s
        )
    except BaseException:
        client.delete(key)
        raise
    return EnqueueResult("enqueued", request.request_id)
