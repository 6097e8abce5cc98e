"""A review's run (docs/architecture.md, "Review"): the stage computed exactly as for an apply,
then stored as a draft instead of written to the history. ``plan`` holds what applying writes
(``producers.drafts`` builds the write from it, through the one write path); the request's
final event is ``compaction_draft``.

A review drafts the run's first stage: a loop stage that would follow it needs the history's
summary written first, so it runs at the next compaction (docs/architecture.md, "Review").
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

from compaction.core import CompactionResult
from compaction.core.contract import CompactionDraft, Stage
from compaction.store.drafts import DraftWrite, summary_tokens
from compaction.store.models import utcnow
from compaction.store.records import CompactionWrite, compaction_write
from compaction.worker import receipts
from compaction.worker.lock import SessionLock
from compaction.worker.summarizers import ChannelSummarizer, Written

if TYPE_CHECKING:
    from compaction.worker.pipeline import JobRun, Loaded


def plan_of(
    write: CompactionWrite, loaded: Loaded, result: CompactionResult, stage: Stage, by: Written
) -> dict[str, Any]:
    """What applying the draft writes, as JSON: the stage, the language, the summary's ``seq``
    range with the ids it replaces (the re-check's "all still present and uncompacted"), the
    pruned ids, and the summary's own estimate."""
    start, end = result.middle
    summary = write.summary
    return {
        "stage": stage,
        "language": write.language,
        "summarizer": by.summarizer,
        "summary": None
        if summary is None
        else {
            "firstSeq": summary.first_seq,
            "lastSeq": summary.last_seq,
            "expectedRemoved": summary.expected_removed,
            # the rows it replaces; the pinned ones of the span stay (docs/architecture.md,
            # "Pins")
            "ids": [s.id for s in loaded.view[start:end] if s.id not in summary.kept_ids],
            "keptIds": list(summary.kept_ids),
        },
        "summaryTokens": summary_tokens(result.summary_text, loaded.config) if summary else 0,
        "prunedIds": list(write.pruned_ids),
        "durations": {k: round(v, 4) for k, v in write.durations.items()},
    }


def draft(
    job: JobRun,
    lock: SessionLock,
    stage: tuple[Loaded, CompactionResult, Stage],
    summarizer: ChannelSummarizer,
) -> CompactionDraft:
    """Store the stage's result as the session's ready draft (the older one discarded) and
    publish ``compaction_draft``; the history is not touched."""
    loaded, result, name = stage
    runtime, request = job.runtime, job.request
    lock.check()  # a worker that lost the lock writes nothing, not even a draft
    written = summarizer.written()
    write = compaction_write(loaded.view, result, job.origin(), loaded.version, model=written.model)
    receipt = receipts.stage_receipt(loaded.messages, result, loaded.config, written)
    record = runtime.store.create_draft(
        DraftWrite(
            session_id=request.session_id,
            request_id=request.request_id,
            focus=request.focus,
            summary=result.summary_text if write.summary else "",
            base_version=loaded.version,
            plan=plan_of(write, loaded, result, name, written),
            receipt=receipt.lists(),
            tokens_before=result.tokens_before,
            tokens_after=result.tokens_after,
            model=write.model,
            input_tokens=write.input_tokens,
            output_tokens=write.output_tokens,
            cost=receipt.cost,
            expires_at=utcnow() + timedelta(seconds=runtime.settings.draft_ttl_seconds),
        )
    )
    event = CompactionDraft(
        draft_id=record.id,
        tokens_before=result.tokens_before,
        tokens_after=result.tokens_after,
        expires_at=record.expires_at,
        receipt=receipt.counts(),
        **job.event_fields(),
    )
    job.fields.update(tokens_before=result.tokens_before, tokens_after=result.tokens_after)
    finished = job.finish(event, draft=record.id)
    assert isinstance(finished, CompactionDraft)
    return finished
