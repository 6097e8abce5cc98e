"""Enqueueing compaction jobs (DESIGN §6): RQ's JSON serializer, never pickle (a pickled job
lets anyone who can write to Redis run code in the worker); a pending key so a second request
does not queue behind one already queued; nothing queued while a compaction of the session runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import redis
from rq import Queue
from rq.job import Job
from rq.serializers import JSONSerializer

from compaction.contract import JOB_FUNCTION, CompactionRequested, lock_key, pending_key
from producers.context import Producers, text

EnqueueStatus = Literal["enqueued", "already_pending", "in_flight"]


@dataclass(frozen=True, slots=True)
class EnqueueResult:
    status: EnqueueStatus
    #: this request's id when enqueued; the queued or running one's otherwise
    request_id: str | None


def compaction_queue(client: redis.Redis, name: str = "compaction") -> Queue:
    return Queue(name, connection=client, serializer=JSONSerializer)


def enqueue(queue: Queue, request: CompactionRequested, *, timeout_s: int) -> Job:
    """The job's id is derived from the request id, so a request is queued at most once."""
    return queue.enqueue_call(
        JOB_FUNCTION,
        args=(request.to_wire(),),
        timeout=timeout_s,
        job_id=f"compaction-{request.request_id}",
        result_ttl=3_600,
        failure_ttl=86_400,
        description=f"compaction {request.reason} {request.session_id}",
    )


def running_request(ctx: Producers, session_id: str) -> str | None:
    """The request id of the compaction running now (from the lock's token), if any."""
    token = _text(ctx.redis.get(lock_key(ctx.settings.channel_prefix, session_id)))
    if token is None:
        return None
    return token.split(":", 1)[0] or "unknown"


def pending_request(ctx: Producers, session_id: str) -> str | None:
    return _text(ctx.redis.get(pending_key(ctx.settings.channel_prefix, session_id)))


def _text(value: bytes | str | None) -> str | None:
    return None if value is None else text(value)


def submit(ctx: Producers, request: CompactionRequested) -> EnqueueResult:
    running = running_request(ctx, request.session_id)
    if running is not None:
        return EnqueueResult("in_flight", running)
    key = pending_key(ctx.settings.channel_prefix, request.session_id)
    if not ctx.redis.set(key, request.request_id, nx=True, ex=ctx.settings.pending_ttl_s):
        return EnqueueResult("already_pending", pending_request(ctx, request.session_id))
    try:
        enqueue(
            compaction_queue(ctx.redis, ctx.settings.queue_name),
            request,
            timeout_s=ctx.settings.job_timeout_s,
        )
    except BaseException:
        ctx.redis.delete(key)
        raise
    return EnqueueResult("enqueued", request.request_id)
