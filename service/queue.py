"""Enqueueing compaction jobs (docs/architecture.md, "The job"): RQ's JSON serializer, never
pickle; a pending key so a second request does not queue behind one already queued; no auto
request queued while a compaction of the session runs; a ``/compact`` sent while an auto request
is queued upgrades it. The producers and the ingress both enqueue here; the worker takes the
pending key (and the upgrade with it) here too, so the two sides of the protocol share one home.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, cast

import redis
from pydantic import ValidationError
from rq import Queue
from rq.job import Job
from rq.serializers import JSONSerializer

from compaction.core.contract import CompactionRequested
from compaction.service import logs
from compaction.service.keys import (
    JOB_FUNCTION,
    job_id,
    lock_key,
    pending_key,
    pending_parts,
    pending_value,
    token_request,
    upgrade_key,
)
from compaction.service.redis import text
from compaction.service.settings import Settings

log = logs.get_logger(__name__)

EnqueueStatus = Literal["enqueued", "already_pending", "upgraded", "in_flight"]

#: an upgrade lives as long as its queued job may wait in the queue; the worker deletes it
UPGRADE_TTL_S = 86_400

# One step, so a worker taking the pending key (``_TAKE``) comes wholly before or after it:
# a queued request answers ``already_pending``, unless it is an auto one and this a manual one
# (ARGV[4], its payload), which then upgrades it (once); an auto request answers ``in_flight``
# while the lock is held; otherwise this request is marked pending.
_SUBMIT = """
local pending = redis.call('GET', KEYS[1])
if pending then
  local auto = ARGV[3]
  if ARGV[4] ~= '' and string.sub(pending, 1, #auto) == auto then
    local queued = string.sub(pending, #auto + 1)
    if redis.call('HGET', KEYS[2], 'for') ~= queued then
      redis.call('DEL', KEYS[2])
      redis.call('HSET', KEYS[2], 'for', queued, 'request', ARGV[4])
      redis.call('EXPIRE', KEYS[2], ARGV[5])
      return {'upgraded', pending}
    end
  end
  return {'already_pending', pending}
end
if ARGV[4] == '' then
  local token = redis.call('GET', KEYS[3])
  if token then return {'in_flight', token} end
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return {'enqueued', ARGV[1]}
"""

# The worker starts a request: its pending key goes (while it still names it) and the upgrade
# bound to it is taken, in one step.
_TAKE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
if redis.call('HGET', KEYS[2], 'for') == ARGV[2] then
  local upgrade = redis.call('HGET', KEYS[2], 'request')
  redis.call('DEL', KEYS[2])
  return upgrade
end
return false
"""


@dataclass(frozen=True, slots=True)
class EnqueueResult:
    status: EnqueueStatus
    #: this request's id when enqueued; the queued (upgraded) or running one's otherwise
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
    return _running_id(client.get(lock_key(prefix, session_id)))


def pending_request(client: redis.Redis, prefix: str, session_id: str) -> str | None:
    """The request id queued for the session and not yet taken by a worker, if any."""
    return _pending_id(client.get(pending_key(prefix, session_id)))


def pending_and_running(
    client: redis.Redis, prefix: str, session_id: str
) -> tuple[str | None, str | None]:
    """``pending_request`` and ``running_request`` read together: one MGET, one round trip."""
    value, token = client.mget(pending_key(prefix, session_id), lock_key(prefix, session_id))
    return _pending_id(value), _running_id(token)


def queued_or_running(client: redis.Redis, prefix: str, session_id: str) -> str | None:
    """The request a gateway would wait for: the queued one, else the running one."""
    pending, running = pending_and_running(client, prefix, session_id)
    return pending or running


def _pending_id(value: bytes | str | None) -> str | None:
    return None if value is None else pending_parts(text(value))[1]


def _running_id(token: bytes | str | None) -> str | None:
    return None if token is None else token_request(text(token))


def submit(client: redis.Redis, settings: Settings, request: CompactionRequested) -> EnqueueResult:
    """Queue ``request`` unless the session's queued request covers it (docs/architecture.md,
    "The job", "One queued request per session"): a manual request is queued even while a
    compaction runs (its job waits for the lock), and upgrades a queued auto request."""
    prefix, session_id = settings.channel_prefix, request.session_id
    key = pending_key(prefix, session_id)
    mine = pending_value(request.reason, request.request_id)
    payload = request.to_json() if request.reason == "manual" else ""
    status, found = client.register_script(_SUBMIT)(
        keys=[key, upgrade_key(prefix, session_id), lock_key(prefix, session_id)],
        args=[mine, settings.pending_ttl_s, pending_value("auto", ""), payload, UPGRADE_TTL_S],
    )
    status, found = text(status), text(found)
    if status == "in_flight":
        return EnqueueResult("in_flight", token_request(found))
    if status != "enqueued":
        return EnqueueResult(cast(EnqueueStatus, status), pending_parts(found)[1])
    try:
        enqueue(
            compaction_queue(client, settings.queue_name), request, timeout_s=settings.rq_timeout_s
        )
    except BaseException:
        client.delete(key)
        raise
    return EnqueueResult("enqueued", request.request_id)


def take_pending(
    client: redis.Redis, prefix: str, request: CompactionRequested
) -> CompactionRequested:
    """The request a worker runs, as it starts ``request``: no longer queued (another may queue
    behind it now), and manual with the focus of a ``/compact`` that upgraded it."""
    session_id = request.session_id
    raw = client.register_script(_TAKE)(
        keys=[pending_key(prefix, session_id), upgrade_key(prefix, session_id)],
        args=[pending_value(request.reason, request.request_id), request.request_id],
    )
    if raw is None:
        return request
    try:
        manual = CompactionRequested.model_validate_json(raw)
    except ValidationError as err:  # anyone able to write to Redis may have written it
        log.warning("unreadable upgrade ignored", session=session_id, error=str(err)[:300])
        return request
    log.info(
        "request upgraded", session=session_id, request=request.request_id, by=manual.request_id
    )
    return request.model_copy(
        update={
            "reason": "manual",
            "focus": manual.focus,
            "model": request.model or manual.model,
            "context_window": manual.context_window or request.context_window,
        }
    )
