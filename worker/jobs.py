"""The ``compaction_requested`` job (docs/architecture.md, "The job"): the only function a
worker runs.

Take the request off the session's pending key (a ``/compact`` that upgraded it makes it manual),
take the session's lock (an auto request finding it held: ``compaction_skipped``; a manual one
waits for it up to ``COMPACTION_MANUAL_LOCK_WAIT_S``) and record the request as running
(``worker.inflight``: a request whose worker dies is answered as ``worker_lost``), then run the
pipeline of ``worker.pipeline``. Any failure publishes ``compaction_failed`` with its stable
code, records the run, and leaves the history as it was. A worker whose compaction is switched
off (``COMPACTION_ENABLED=false``) refuses every job: ``compaction_disabled``.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from compaction.core.contract import (
    AnyEvent,
    CompactionFailed,
    CompactionRequested,
    CompactionSkipped,
    valid_session_id,
)
from compaction.core.errors import (
    CompactionDisabled,
    CompactionError,
    ErrorCode,
    LockLost,
    invalid_request,
)
from compaction.service import logs
from compaction.service.queue import take_pending
from compaction.store.records import EventRow, FailedRun
from compaction.worker import inflight
from compaction.worker.inflight import InFlight
from compaction.worker.lock import SessionLock, heartbeat
from compaction.worker.pipeline import JobRun, run_locked
from compaction.worker.runtime import Runtime, current

log = logs.get_logger("compaction.job")


def compaction_requested(payload: dict[str, Any]) -> dict[str, Any]:
    """The RQ entry point; returns the final event (as on the wire)."""
    runtime = current()
    try:
        request = CompactionRequested.model_validate(payload)
    except ValidationError as err:
        return _invalid(runtime, payload, err).to_wire()
    return run(runtime, request).to_wire()


def _invalid(runtime: Runtime, payload: Any, err: ValidationError) -> AnyEvent:
    detail = invalid_request(err, "compaction_requested").message
    log.error("invalid job", code="invalid_request", error=detail)
    data = payload if isinstance(payload, dict) else {}
    session_id, request_id = data.get("sessionId"), data.get("requestId")
    if not valid_session_id(session_id):
        return CompactionFailed(session_id="?", error=detail, code="invalid_request")
    event = CompactionFailed(
        session_id=session_id,
        request_id=request_id if isinstance(request_id, str) else None,
        error=detail,
        code="invalid_request",
    )
    runtime.publisher.publish(event)
    return event


def run(runtime: Runtime, request: CompactionRequested) -> AnyEvent:
    settings = runtime.settings
    job = JobRun(runtime, _taken(runtime, request))
    if not settings.enabled:  # refused before the lock: nothing announced, no row in the history
        return _failed(job, "compaction_disabled", CompactionDisabled().message, history_row=False)
    request = job.request
    lock = SessionLock(
        runtime.redis,
        request.session_id,
        ttl_s=settings.lock_ttl_s,
        prefix=settings.channel_prefix,
        owner=request.request_id,
    )
    wait_s = settings.manual_lock_wait_s if request.reason == "manual" else 0
    if not lock.acquire(wait_s):
        waited = f" (waited {wait_s} s)" if wait_s else ""
        detail = f"another compaction of this session is running{waited}"
        return job.finish(CompactionSkipped(code="lock_held", detail=detail, **job.event_fields()))
    record = InFlight(request, lock.token, runtime.name, job.started_at)
    with heartbeat(lock), inflight.tracked(runtime, record) as tracking:
        try:
            return run_locked(job, lock)
        except LockLost as err:
            if tracking.taken():
                return _answered_as_lost(job, err)
            return _failed(job, err.code, err.message)
        except CompactionError as err:
            return _failed(job, err.code, err.message)
        except Exception as err:  # a bug must not kill the worker nor change the history
            log.exception("compaction job crashed", **job.fields)
            return _failed(job, "internal_error", f"{type(err).__name__}: {err}"[:300])


def _answered_as_lost(job: JobRun, err: LockLost) -> AnyEvent:
    """The job stalled past its lock's TTL and another worker answered its request as
    ``worker_lost`` (``worker.inflight``): that is the request's final event and its failed run,
    so this one is neither published nor recorded; the job wrote nothing (the lock was lost)."""
    log.warning("lock lost; the request was answered as lost", code=err.code, **job.fields)
    return CompactionFailed(error=err.message, code=err.code, stage=job.stage, **job.event_fields())


def _failed(job: JobRun, code: ErrorCode, error: str, *, history_row: bool = True) -> AnyEvent:
    """Record the failed run (and, with ``history_row``, the user's "failed" row) and publish
    ``compaction_failed``."""
    stage = {"stage": job.stage} if job.stage else {}
    payload = {"requestId": job.request.request_id, "code": code, **stage}
    row = EventRow.of("failed", payload, job.language, error)
    try:
        job.runtime.store.record_failed_run(
            FailedRun(
                origin=job.origin(), code=code, error=error, event=row if history_row else None
            )
        )
    except CompactionError as err:  # unknown session, database down: the event still goes out
        job.fields["record_error"] = err.code
    return job.finish(
        CompactionFailed(error=error, code=code, stage=job.stage, **job.event_fields())
    )


def _taken(runtime: Runtime, request: CompactionRequested) -> CompactionRequested:
    """The request off the session's pending key; upgraded by a ``/compact`` sent meanwhile."""
    try:
        return take_pending(runtime.redis, runtime.settings.channel_prefix, request)
    except Exception as err:  # Redis errors surface at the lock, with a proper event
        log.warning("pending key not taken", error=str(err))
        return request
