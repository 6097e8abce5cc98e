"""The ``compaction_requested`` job (DESIGN §1, §4, §7).

Take the session's lock (held: ``compaction_skipped``), load the compacted view, run the core,
write the result in one transaction fenced by the session's version, then publish. Any failure
publishes ``compaction_failed`` with its stable code, records the run, and leaves the history
as it was.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import ValidationError

from compaction import (
    CompactionConfig,
    CompactionResult,
    antiloop,
    compact,
    estimate_messages_tokens,
)
from compaction.contract import (
    AnyEvent,
    CompactionDone,
    CompactionFailed,
    CompactionRequested,
    CompactionSkipped,
    CompactionStart,
    ContextUsage,
    TokenUpdate,
    TokenUsage,
)
from compaction.errors import CompactionError
from compaction.prompts import Language, detect_language
from compaction.windows import context_window
from service.keys import pending_key
from store.compactions import plan_compaction
from store.records import StoredMessage
from worker import metrics, texts
from worker.lock import SessionLock, heartbeat
from worker.runtime import Runtime, current
from worker.summarizers import ChannelSummarizer

log = logging.getLogger("compaction.job")


def compaction_requested(payload: dict[str, Any]) -> dict[str, Any]:
    """The RQ entry point; returns the final event (as on the wire)."""
    runtime = current()
    try:
        request = CompactionRequested.model_validate(payload)
    except ValidationError as err:
        return _invalid(runtime, payload, err).to_wire()
    return run(runtime, request).to_wire()


def _invalid(runtime: Runtime, payload: Any, err: ValidationError) -> AnyEvent:
    first = err.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "payload"
    detail = f"invalid compaction_requested: {where}: {first['msg']}"
    log.error("invalid job", extra={"fields": {"code": "invalid_request", "error": detail}})
    data = payload if isinstance(payload, dict) else {}
    session_id, request_id = data.get("sessionId"), data.get("requestId")
    if not isinstance(session_id, str) or not 0 < len(session_id) <= 128:
        return CompactionFailed(session_id="?", error=detail, code="invalid_request")
    event = CompactionFailed(
        session_id=session_id,
        request_id=request_id if isinstance(request_id, str) else None,
        error=detail,
        code="invalid_request",
    )
    runtime.publisher.publish(event)
    return event


class _Job:
    """One run of one request: its timings and what to say about it."""

    def __init__(self, runtime: Runtime, request: CompactionRequested) -> None:
        self.runtime = runtime
        self.request = request
        self.started = time.perf_counter()
        self.started_at = datetime.now(UTC)
        self.language: Language = "en"
        self.fields: dict[str, Any] = {
            "session": request.session_id,
            "request": request.request_id,
            "reason": request.reason,
        }

    def event_fields(self) -> dict[str, Any]:
        return {
            "session_id": self.request.session_id,
            "request_id": self.request.request_id,
            "reason": self.request.reason,
        }

    def finish(self, event: AnyEvent, **fields: Any) -> AnyEvent:
        self.runtime.publisher.publish(event)
        seconds = time.perf_counter() - self.started
        code = getattr(event, "code", None)
        self.fields.update(outcome=event.type, code=code, seconds=round(seconds, 3), **fields)
        log.info("compaction job", extra={"fields": self.fields})
        saved = event.tokens_before - event.tokens_after if isinstance(event, CompactionDone) else 0
        outcome = event.type.removeprefix("compaction_")
        metrics.record(
            self.runtime.redis,
            self.runtime.settings.channel_prefix,
            f"{outcome}:{code}" if code else outcome,
            seconds,
            saved,
        )
        return event


def run(runtime: Runtime, request: CompactionRequested) -> AnyEvent:
    job = _Job(runtime, request)
    settings = runtime.settings
    _clear_pending(runtime, request)
    lock = SessionLock(
        runtime.redis,
        request.session_id,
        ttl_s=settings.lock_ttl_s,
        prefix=settings.channel_prefix,
        owner=request.request_id,
    )
    if not lock.acquire():
        return job.finish(
            CompactionSkipped(
                code="lock_held",
                detail="another compaction of this session is running",
                **job.event_fields(),
            )
        )
    with heartbeat(lock):
        try:
            return _run_locked(job, lock)
        except CompactionError as err:
            return _failed(job, err.code, err.message)
        except Exception as err:  # a bug must not kill the worker nor change the history
            log.exception("compaction job crashed", extra={"fields": job.fields})
            return _failed(job, "internal_error", f"{type(err).__name__}: {err}"[:300])


def _failed(job: _Job, code: str, error: str) -> AnyEvent:
    try:
        job.runtime.store.record_failed_run(
            job.request.session_id,
            reason=job.request.reason,
            code=code,
            error=error,
            request_id=job.request.request_id,
            worker=job.runtime.name,
            started_at=job.started_at,
            event_text=texts.failed(job.language, error),
        )
    except CompactionError as err:  # unknown session, database down: the event still goes out
        job.fields["record_error"] = err.code
    return job.finish(CompactionFailed(error=error, code=code, **job.event_fields()))


def _run_locked(job: _Job, lock: SessionLock) -> AnyEvent:
    runtime, request = job.runtime, job.request
    store, settings = runtime.store, runtime.settings
    info = store.get_session(request.session_id)
    agent = store.get_agent(info.agent_id) if info.agent_id else None
    model = request.model or info.model or (agent.model if agent else None)
    window = (
        request.context_window
        or context_window(model)
        or (agent.context_window if agent else None)
        or settings.context_window
    )
    view = store.load_history(request.session_id)
    messages = [stored.message for stored in view]
    job.language = (
        detect_language(messages)
        if settings.summary_language == "auto"
        else settings.summary_language
    )
    config = settings.compaction_config(
        context_window=window,
        threshold_percent=agent.compaction_threshold_percent if agent else None,
        protect_first_n=agent.compaction_protect_first_n if agent else None,
        summary_language=job.language,  # detected once: the core need not read it again
    )
    if request.reason == "auto":
        # Decided before anything is announced: no "compacting…" row for a request that will
        # not compact.
        skipped = _auto_skip(runtime, request.session_id, messages, config)
        if skipped is not None:
            code, detail = skipped
            return job.finish(CompactionSkipped(code=code, detail=detail, **job.event_fields()))
    runtime.publisher.publish(CompactionStart(**job.event_fields()))
    store.append_event(
        request.session_id,
        "start",
        texts.started(job.language),
        {"requestId": request.request_id, "reason": request.reason},
    )
    summarizer = ChannelSummarizer(runtime, info.agent_id)
    result = compact(messages, config, summarizer, reason=request.reason, focus=request.focus)
    job.fields.update(
        tokens_before=result.tokens_before,
        tokens_after=result.tokens_after,
        phases={k: round(v, 4) for k, v in result.timings.items()},
    )
    lock.check()  # nothing is written by a worker that lost its lock
    applied_id, removed, pruned, run_id = _write(
        job, info.compaction_version, view, result, summarizer
    )
    done = job.finish(
        CompactionDone(
            removed_count=removed,
            summary_message_id=applied_id,
            tokens_before=result.tokens_before,
            tokens_after=result.tokens_after,
            pruned_count=pruned,
            run_id=run_id,
            **job.event_fields(),
        ),
        run=run_id,
    )
    runtime.publisher.publish(
        TokenUpdate(
            current=TokenUsage(
                input_tokens=result.input_tokens,
                output_tokens=result.output_tokens,
                total_tokens=result.input_tokens + result.output_tokens,
                api_calls=summarizer.calls,
            ),
            context=ContextUsage(
                used_tokens=result.tokens_after,
                max_tokens=window,
                percent=round(100 * result.tokens_after / window, 1),
                threshold_percent=config.threshold_percent,
            ),
            **job.event_fields(),
        )
    )
    return done


def _write(
    job: _Job,
    version: int,
    view: list[StoredMessage],
    result: CompactionResult,
    summarizer: ChannelSummarizer,
) -> tuple[int | None, int, int, int]:
    runtime, request = job.runtime, job.request
    saved = 1 - result.tokens_after / result.tokens_before if result.tokens_before else 0.0
    # The done row for the UI, written in the same transaction as the compaction.
    event_text = texts.done(result.language, result.removed_count, saved)
    event_payload = {
        "requestId": request.request_id,
        "removedCount": result.removed_count,
        "tokensBefore": result.tokens_before,
        "tokensAfter": result.tokens_after,
    }
    if not result.summarized:  # phase 1 alone (removed_count is 0)
        applied = runtime.store.apply_pruning(
            request.session_id,
            expected_version=version,
            pruned_ids=result.pruned_ids,
            reason=request.reason,
            request_id=request.request_id,
            language=result.language,
            tokens_before=result.tokens_before,
            tokens_after=result.tokens_after,
            worker=runtime.name,
            event_text=event_text,
            event_payload=event_payload,
        )
        return None, 0, applied.pruned_count, applied.run_id
    plan = plan_compaction(
        view,
        result,
        session_id=request.session_id,
        expected_version=version,
        reason=request.reason,
        request_id=request.request_id,
        model=summarizer.model,
        worker=runtime.name,
        started_at=job.started_at,
        event_text=event_text,
        event_payload=event_payload,
    )
    applied = runtime.store.apply_compaction(plan)
    return applied.summary_message_id, applied.removed_count, applied.pruned_count, applied.run_id


def _auto_skip(
    runtime: Runtime, session_id: str, messages: list[Any], config: CompactionConfig
) -> tuple[Literal["below_threshold", "suppressed"], str] | None:
    """Why an auto request stops before it starts: under the threshold, or the anti-loop."""
    tokens = estimate_messages_tokens(messages, config.estimator())
    if tokens < config.threshold_tokens:
        return (
            "below_threshold",
            f"{tokens} tokens, under the threshold of {config.threshold_tokens}",
        )
    runs = runtime.store.runs(session_id)
    recent = [
        (r.tokens_before, r.tokens_after)
        for r in runs
        if r.status == "succeeded" and r.tokens_before and r.tokens_after is not None
    ]
    if antiloop.suppressed(recent, tokens):
        return "suppressed", "the last two compactions each saved under 10%"
    return None


def _clear_pending(runtime: Runtime, request: CompactionRequested) -> None:
    """The request is running, no longer queued: another may queue behind it now."""
    key = pending_key(runtime.settings.channel_prefix, request.session_id)
    try:
        if runtime.redis.get(key) in (request.request_id.encode(), None):
            runtime.redis.delete(key)
    except Exception as err:  # Redis errors surface at the lock, with a proper event
        log.warning("pending key not cleared", extra={"fields": {"error": str(err)}})
