"""The request a job is running, kept in Redis so that a request whose worker died still gets
its final event (docs/architecture.md, "The job").

A job that holds a session's lock records its request under ``<prefix>:running:<sessionId>``
and removes the record once it has answered. A record that outlives its job names a request
nobody will answer: its worker died (``kill -9``, out of memory). Whoever finds it first takes
it, atomically, so one party alone answers it with ``compaction_failed`` (``worker_lost``) and
the "failed" row that ends its "compacting" row:

- the next job of the session, which holds the lock the dead job lost (it swaps the record for
  its own in one command);
- a worker that knows the job's process is dead (RQ's maintenance found the job abandoned, or
  a work horse died; ``worker.rq_guard``); it also frees the session's lock when the dead job
  still holds it;
- any live worker's watch (``watching``): every second or so it reads the records of the
  sessions in ``<prefix>:running`` and takes each one whose lock is no longer its token. The
  heartbeat renews a live job's lock every third of its TTL, so an expired lock means a dead
  job: its request ends within the lock's TTL and a second, with no other request of the
  session and no RQ maintenance.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import redis
from pydantic import ValidationError

from compaction.core.contract import CompactionFailed, CompactionRequested
from compaction.core.errors import CompactionError
from compaction.core.prompts import summary_language
from compaction.service import logs
from compaction.service.keys import lock_key, running_index, running_key
from compaction.service.redis import text
from compaction.store.records import EventRow, FailedRun, RunOrigin
from compaction.worker import metrics
from compaction.worker.runtime import Runtime

log = logs.get_logger("compaction.job")

#: a record outlives its job only when the worker died; RQ finds such a job abandoned within
#: the job's timeout plus a few minutes, and keeps a failed job a day
RECORD_TTL_S = 86_400

#: how often a worker's watch looks, at most (a third of a shorter lock TTL)
WATCH_PERIOD_S = 1.0

# Compare-and-delete: the record (or the lock) goes only while it still holds what the caller
# read, so a record swapped in by the next job meanwhile is never taken.
_DELETE_IF = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
# A session leaves the index only while it has no record: one written meanwhile keeps it there.
_FORGET_IF_GONE = """
if redis.call('EXISTS', KEYS[2]) == 0 then return redis.call('SREM', KEYS[1], ARGV[1]) end
return 0
"""


@dataclass(frozen=True, slots=True)
class InFlight:
    """A running request: what its final event and run record need, and its lock token."""

    request: CompactionRequested
    token: str
    worker: str
    started_at: datetime

    def dumps(self) -> str:
        return json.dumps(
            {
                "request": self.request.to_wire(),
                "token": self.token,
                "worker": self.worker,
                "startedAt": self.started_at.isoformat(),
            }
        )

    @classmethod
    def loads(cls, raw: bytes | str) -> InFlight | None:
        """The record, or None when it is not one (anyone able to write to Redis may have)."""
        try:
            data: Any = json.loads(raw)
            return cls(
                CompactionRequested.model_validate(data["request"]),
                str(data["token"]),
                str(data["worker"])[:200],
                datetime.fromisoformat(data["startedAt"]),
            )
        except (ValueError, TypeError, KeyError, ValidationError) as err:
            log.warning("unreadable in-flight record", error=str(err)[:300])
            return None


@dataclass
class Tracking:
    """A job's record, as ``tracked`` wrote it."""

    runtime: Runtime
    key: str
    raw: str
    written: bool = False

    def taken(self) -> bool:
        """Whether another party took the record, so answered the request as lost: a watch or
        the session's next job found the job's lock expired (it stalled past its TTL). Its
        request has its final event; the job must not publish a second one."""
        if not self.written:
            return False
        try:
            value = self.runtime.redis.get(self.key)
        except redis.RedisError:
            return False  # unknown: the job answers, as it would have
        return not isinstance(value, bytes | str) or text(value) != self.raw


@contextmanager
def tracked(runtime: Runtime, record: InFlight) -> Iterator[Tracking]:
    """Record ``record`` while the block runs (the job holds the session's lock), answering the
    request of a job that died holding it before. Best effort: without Redis the job fails
    anyway, and a record left behind is answered as lost."""
    prefix, session_id = runtime.settings.channel_prefix, record.request.session_id
    key = running_key(prefix, session_id)
    raw = record.dumps()
    tracking = Tracking(runtime, key, raw)
    try:
        # one round trip; the index after the record, in this order (see sweep)
        pipe = runtime.redis.pipeline(transaction=False)
        pipe.set(key, raw, ex=RECORD_TTL_S, get=True)
        pipe.sadd(running_index(prefix), session_id)
        previous, _ = pipe.execute()
        tracking.written = True
        lost = InFlight.loads(previous) if isinstance(previous, bytes | str) else None
        if lost is not None and _other_request(lost.request, record.request):
            report_lost(runtime, lost)
    except Exception as err:  # never a reason to fail the job that holds the lock now
        log.warning("in-flight record not written", error=str(err)[:300])
    try:
        yield tracking
    finally:
        try:
            _delete_if(runtime.redis, key, raw)
        except redis.RedisError as err:
            log.warning("in-flight record not removed", error=str(err))


def claim(runtime: Runtime, session_id: str, request_id: str) -> InFlight | None:
    """Take the record of ``request_id``, whose process is known dead: only one caller gets it.
    The session's lock goes too while the dead job still holds it."""
    prefix = runtime.settings.channel_prefix
    key = running_key(prefix, session_id)
    raw = runtime.redis.get(key)
    if not isinstance(raw, bytes | str):
        return None
    record = InFlight.loads(raw)
    if record is None or (record.request.session_id, record.request.request_id) != (
        session_id,
        request_id,
    ):
        return None
    if not _delete_if(runtime.redis, key, text(raw)):
        return None  # the next job of the session took it first
    _delete_if(runtime.redis, lock_key(prefix, session_id), record.token)
    return record


@contextmanager
def watching(runtime: Runtime) -> Iterator[None]:
    """While the block runs, a thread answers the requests of dead workers (``sweep``) every
    ``WATCH_PERIOD_S`` or third of the lock's TTL, whichever is shorter."""
    stop = threading.Event()
    period = min(WATCH_PERIOD_S, runtime.settings.lock_ttl_s / 3)

    def watch() -> None:
        while not stop.wait(period):
            try:
                sweep(runtime)
            except Exception as err:  # Redis away, a bug: the next look tries again
                log.warning("in-flight watch failed", error=str(err)[:300])

    thread = threading.Thread(target=watch, name="compaction-inflight-watch", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=period + 1)


def sweep(runtime: Runtime) -> int:
    """Answer each request whose record outlived its lock (its worker died); how many. The
    record is taken with compare-and-delete, so of the watches, the dead job's next job and RQ's
    maintenance, one alone answers it."""
    prefix = runtime.settings.channel_prefix
    index = running_index(prefix)
    answered = 0
    for member in runtime.redis.smembers(index):
        session_id = text(member)
        key = running_key(prefix, session_id)
        raw = runtime.redis.get(key)
        if not isinstance(raw, bytes | str):
            runtime.redis.eval(_FORGET_IF_GONE, 2, index, key, session_id)
            continue
        record = InFlight.loads(raw)
        if record is None or record.request.session_id != session_id:
            continue  # not a record of ours: left to its TTL
        holder = runtime.redis.get(lock_key(prefix, session_id))
        if isinstance(holder, bytes | str) and text(holder) == record.token:
            continue  # its job is alive: its heartbeat renews the lock
        if _delete_if(runtime.redis, key, text(raw)):
            report_lost(runtime, record)
            answered += 1
    return answered


def report_lost(runtime: Runtime, lost: InFlight) -> None:
    """``compaction_failed`` (``worker_lost``) for a request whose worker died, its failed run
    and the row that ends its "compacting" row. The history is as the dead job found it: its
    write is one transaction, fenced by the session's version."""
    request = lost.request
    error = f"the worker running this request ({lost.worker}) stopped before it finished"
    fields = {"session": request.session_id, "request": request.request_id, "worker": lost.worker}
    try:
        view = runtime.store.load_history(request.session_id)
        language = summary_language(runtime.settings.summary_language, [r.message for r in view])
        runtime.store.record_failed_run(
            FailedRun(
                origin=RunOrigin(
                    session_id=request.session_id,
                    reason=request.reason,
                    request_id=request.request_id,
                    worker=lost.worker,
                    started_at=lost.started_at,
                ),
                code="worker_lost",
                error=error,
                event=EventRow.of(
                    "failed",
                    {"requestId": request.request_id, "code": "worker_lost"},
                    language,
                    error,
                ),
            )
        )
    except CompactionError as err:  # unknown session, database down: the event still goes out
        fields["record_error"] = err.code
    runtime.publisher.publish(
        CompactionFailed(
            session_id=request.session_id,
            request_id=request.request_id,
            reason=request.reason,
            error=error,
            code="worker_lost",
        )
    )
    log.warning("lost request answered", code="worker_lost", **fields)
    seconds = (datetime.now(UTC) - lost.started_at).total_seconds()
    metrics.record("failed", "worker_lost", seconds)


def _other_request(lost: CompactionRequested, running: CompactionRequested) -> bool:
    """Whether ``lost`` is another request of the running one's session."""
    return lost.session_id == running.session_id and lost.request_id != running.request_id


def _delete_if(client: redis.Redis, key: str, value: str) -> bool:
    return bool(client.eval(_DELETE_IF, 1, key, value))
