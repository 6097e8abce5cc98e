"""The phases of one locked run (docs/architecture.md, "The job"), each a small function
returning what the next one needs: load the session, decide whether the request stops before
anything is announced, then each stage (the history's, the loop's when the history alone was
not enough: ``compaction.core.staged``): announce, compact, write in one fenced transaction, and say
what happened.

``worker.jobs`` takes the lock and turns failures into events; this module is the straight
path through a run that succeeds or stops early.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from compaction.core import (
    CompactionConfig,
    CompactionResult,
    compact,
    first_stage,
    loop_follows,
)
from compaction.core.boundaries import token_counts
from compaction.core.contract import (
    AnyEvent,
    CompactionDone,
    CompactionRequested,
    CompactionSkipped,
    CompactionStart,
    Stage,
)
from compaction.core.decision import decide
from compaction.core.errors import NothingToCompact
from compaction.core.event_text import event_text
from compaction.core.messages import Message
from compaction.core.prompts import Language, summary_language
from compaction.core.staged import loop_stage
from compaction.core.system_prompt import leading_system_tokens, refuse_system_prompt
from compaction.service import logs
from compaction.service.context import SessionContext
from compaction.store.records import (
    AppliedCompaction,
    EventRow,
    FailedRun,
    RunOrigin,
    StoredMessage,
    compaction_write,
)
from compaction.worker import drafts, metrics, receipts, updates
from compaction.worker.lock import SessionLock
from compaction.worker.receipts import StageReceipt
from compaction.worker.runtime import Runtime
from compaction.worker.summarizers import ChannelSummarizer, Written

log = logs.get_logger("compaction.job")


class JobRun:
    """One run of one request: its timings, its log fields, and how it ends."""

    def __init__(self, runtime: Runtime, request: CompactionRequested) -> None:
        self.runtime = runtime
        self.request = request
        self.started = time.perf_counter()
        self.started_at = datetime.now(UTC)
        self.language: Language = "en"
        #: the stage announced last (what a failure from here on is a failure of)
        self.stage: Stage | None = None
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

    def origin(self) -> RunOrigin:
        """What the run's record says of the request and the worker, however it ends."""
        request = self.request
        return RunOrigin(
            session_id=request.session_id,
            reason=request.reason,
            request_id=request.request_id,
            worker=self.runtime.name,
            started_at=self.started_at,
        )

    def finish(self, event: AnyEvent, **fields: Any) -> AnyEvent:
        """Publish the final event, log the run, count it."""
        self.runtime.publisher.publish(event)
        seconds = time.perf_counter() - self.started
        code = getattr(event, "code", None)
        self.fields.update(outcome=event.type, code=code, seconds=round(seconds, 3), **fields)
        log.info("compaction job", **self.fields)
        saved = event.tokens_before - event.tokens_after if isinstance(event, CompactionDone) else 0
        metrics.record(event.type.removeprefix("compaction_"), code or "", seconds, saved)
        return event


@dataclass(frozen=True, slots=True)
class Loaded:
    """The session as the run found it."""

    context: SessionContext
    view: list[StoredMessage]
    messages: list[Message]
    #: each message's estimate (``token_counts``), counted once for the rules and the stage
    counts: list[int]
    config: CompactionConfig
    #: the session's compaction version the view was read at (the write's fence)
    version: int


def load(job: JobRun) -> Loaded:
    """The session's context and compacted view; the language detected once, for the core and
    for the user's event rows."""
    runtime, request = job.runtime, job.request
    settings = runtime.settings
    context = runtime.contexts.resolve(
        request.session_id, model=request.model, window=request.context_window
    )
    view = runtime.store.load_history(request.session_id)
    messages = [stored.message for stored in view]
    job.language = summary_language(settings.summary_language, messages)
    config = context.config(settings, summary_language=job.language)
    counts = token_counts(messages, config)
    return Loaded(context, view, messages, counts, config, context.info.compaction_version)


def reload(job: JobRun, loaded: Loaded, version: int) -> Loaded:
    """The view again after a stage wrote at ``version``: the next stage's input and fence."""
    view = job.runtime.store.load_history(job.request.session_id)
    messages = [s.message for s in view]
    counts = token_counts(messages, loaded.config)
    return replace(loaded, view=view, messages=messages, counts=counts, version=version)


def early_stop(job: JobRun, loaded: Loaded) -> CompactionSkipped | Stage:
    """The stage the run starts with, or why the request stops before anything is announced
    (``compaction.core.decision``: the producers ask the same rule). ``nothing_to_compact`` is
    skipped when auto and failed when manual: the user asked for a compaction that cannot be
    done. A system prompt alone over the threshold fails it (``system_prompt_too_large``)."""
    request, config = job.request, loaded.config
    system = leading_system_tokens(loaded.messages, loaded.counts)
    refuse_system_prompt(system, config.threshold_tokens, job.language)
    tokens = sum(loaded.counts)
    decision = decide(
        request.reason,
        tokens,
        config.threshold_tokens,
        suppressed=lambda: job.runtime.contexts.suppressed(request.session_id, tokens),
        first_stage=lambda: first_stage(loaded.messages, config, loaded.counts),
    )
    if decision == "history" or decision == "loop":
        return decision
    if decision == "below_threshold":
        detail = f"{tokens} tokens, under the threshold of {config.threshold_tokens}"
    elif decision == "suppressed":
        detail = "the last two compactions each saved under 10%"
    else:  # nothing_to_compact
        detail = (
            f"{len(loaded.messages)} messages: nothing between the protected head "
            f"({config.protect_first_n}) and the kept tail"
        )
        if request.reason == "manual":
            raise NothingToCompact(detail)
    return CompactionSkipped(code=decision, detail=detail, **job.event_fields())


def announce(job: JobRun, stage: Stage) -> None:
    """``compaction_start`` on the wire and the "compacting…" row for the user's screen."""
    request = job.request
    job.stage = stage
    job.runtime.publisher.publish(CompactionStart(stage=stage, **job.event_fields()))
    if request.review:  # a review leaves no row: its outcome is a draft, not the history's
        return
    payload = {"requestId": request.request_id, "reason": request.reason, "stage": stage}
    job.runtime.store.append_event(
        request.session_id, "start", event_text("start", payload, job.language), payload
    )


def write(
    job: JobRun,
    loaded: Loaded,
    result: CompactionResult,
    written: Written,
    stage: Stage,
    receipt: StageReceipt | None = None,
) -> AppliedCompaction:
    """The stage's result, its receipt and its done row, in one transaction fenced by the
    version loaded."""
    by = {"summarizer": written.summarizer} if written.summarizer else {}
    # the counts, as compaction_done carries them: the bubble after a reload says them too
    counted = (
        {"receipt": receipt.counts().model_dump(mode="json", by_alias=True)} if receipt else {}
    )
    done = EventRow.of(
        "done",
        {
            "requestId": job.request.request_id,
            "stage": stage,
            "removedCount": result.removed_count,
            "tokensBefore": result.tokens_before,
            "tokensAfter": result.tokens_after,
            **by,
            **counted,
        },
        result.language,
    )
    plan = compaction_write(
        loaded.view,
        result,
        job.origin(),
        loaded.version,
        model=written.model,
        event=done,
        receipt=receipt.lists() if receipt else None,
        cost=receipt.cost if receipt else None,
    )
    return job.runtime.store.apply_compaction(plan)


def commit(
    job: JobRun,
    lock: SessionLock,
    stage: tuple[Loaded, CompactionResult, Stage],
    summarizer: ChannelSummarizer,
    next_stage: Stage | None = None,
) -> tuple[CompactionDone, AppliedCompaction]:
    """Write one stage's result (nothing, if the lock was lost) and its done event."""
    loaded, result, name = stage
    job.fields.setdefault("tokens_before", result.tokens_before)
    job.fields.update(tokens_after=result.tokens_after)
    job.fields.setdefault("stages", []).append(name)
    if result.timings:
        job.fields["phases"] = {k: round(v, 4) for k, v in result.timings.items()}
    lock.check()
    written = summarizer.written()
    receipt = receipts.stage_receipt(loaded.messages, result, loaded.config, written)
    applied = write(job, loaded, result, written, name, receipt)
    receipts.count(receipt)
    done = CompactionDone(
        stage=name,
        next_stage=next_stage,
        removed_count=applied.removed_count,
        summary_message_id=applied.summary_message_id,
        tokens_before=result.tokens_before,
        tokens_after=result.tokens_after,
        pruned_count=applied.pruned_count,
        run_id=applied.run_id,
        summarizer=written.summarizer,
        receipt=receipt.counts(),
        **job.event_fields(),
    )
    return done, applied


def run_locked(job: JobRun, lock: SessionLock) -> AnyEvent:
    """The stages, under the session's lock: nothing is written by a worker that lost it. The
    history's is written and announced before the loop's starts, so a loop stage that fails
    leaves the history compacted (docs/architecture.md, "The job")."""
    request = job.request
    loaded = load(job)
    stage = early_stop(job, loaded)
    if isinstance(stage, CompactionSkipped):
        return job.finish(stage)
    summarizer = ChannelSummarizer(job.runtime, loaded.context.info.agent_id)
    history = None
    if stage == "history":
        announce(job, "history")
        history = compact(
            loaded.messages,
            loaded.config,
            summarizer,
            reason=request.reason,
            focus=request.focus,
            counts=loaded.counts,
        )
        if (skipped := not_smaller(job, history, "history")) is not None:
            return skipped
        if request.review:  # a draft of the first stage, the history untouched
            return drafts.draft(job, lock, (loaded, history, "history"), summarizer)
        if not loop_follows(history, loaded.config):
            return finish(job, lock, (loaded, history, "history"), summarizer)
        done, applied = commit(job, lock, (loaded, history, "history"), summarizer, "loop")
        job.runtime.publisher.publish(done)
        loaded = reload(job, loaded, applied.version)
    announce(job, "loop")
    result = loop_stage(
        loaded.messages,
        loaded.config,
        summarizer,
        reason=request.reason,
        focus=request.focus,
        history=history,
        counts=loaded.counts,
    )
    if (skipped := not_smaller(job, result, "loop")) is not None:
        return skipped
    if request.review:
        return drafts.draft(job, lock, (loaded, result, "loop"), summarizer)
    return finish(job, lock, (loaded, result, "loop"), summarizer)


def not_smaller(job: JobRun, result: CompactionResult, stage: Stage) -> AnyEvent | None:
    """A stage whose result is not smaller than its input is not applied (docs/algorithm.md,
    "Bounds"): nothing of it is written, the run is recorded as skipped (``not_smaller``, with
    its "skipped" row for the user's screen) and the request ends with ``compaction_skipped``.
    ``None``: the result is smaller, apply it."""
    before, after = result.tokens_before, result.tokens_after
    if after < before:
        return None
    detail = f"the result is ~{after} tokens, not smaller than the {before} it would replace"
    payload = {"requestId": job.request.request_id, "code": "not_smaller", "stage": stage}
    job.runtime.store.record_failed_run(
        FailedRun(
            origin=job.origin(),
            code="not_smaller",
            error=detail,
            status="skipped",
            tokens_before=before,
            durations=dict(result.timings),
            event=EventRow.of("skipped", payload, job.language, detail),
        )
    )
    skipped = CompactionSkipped(
        code="not_smaller", detail=detail, stage=stage, **job.event_fields()
    )
    return job.finish(skipped, tokens_before=before, tokens_after=after)


def finish(
    job: JobRun,
    lock: SessionLock,
    stage: tuple[Loaded, CompactionResult, Stage],
    summarizer: ChannelSummarizer,
) -> CompactionDone:
    """The last stage: written, its done event the request's final one, the bar's figures."""
    done, applied = commit(job, lock, stage, summarizer)
    job.finish(done, run=applied.run_id)
    updates.publish_token_update(job, stage[0], stage[1])
    return done
