"""A review's drafts for the user (docs/architecture.md, "Review"): read, edit the summary,
discard, regenerate with another focus, and apply.

Applying builds the run's write from the draft's ``plan`` and hands it to the one write path
(``Store.apply_draft``, through ``Compactions.apply_compaction``), fenced by the version read
here. A session whose compaction version moved since the draft is re-checked first: the draft's
messages all still in the compacted view, none compacted or pruned since, no other row in its
``seq`` range; whatever the version, the result must still fit (under the threshold, or at least
smaller than the context now), else ``draft_stale`` and nothing changes. An applied draft is a
run like any other: ``compaction_done`` with its id, and undo.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

import redis
from pydantic import ConfigDict, Field, TypeAdapter

from compaction.core.boundaries import token_counts
from compaction.core.contract import (
    TEXT_PATTERN,
    AuxTokens,
    CompactionDone,
    Count,
    Receipt,
    UserMessageCount,
    new_request_id,
)
from compaction.core.errors import (
    CompactionError,
    DraftClosed,
    DraftStale,
    InvalidRequest,
    LockLost,
    as_invalid_request,
)
from compaction.core.event_text import event_text
from compaction.core.messages import Message
from compaction.core.receipt import receipt_of
from compaction.core.result import CompactionResult
from compaction.service.events import EventPublisher
from compaction.service.queue import EnqueueResult
from compaction.store.drafts import DraftRecord, summary_tokens
from compaction.store.records import (
    AppliedCompaction,
    CompactionWrite,
    EventRow,
    RunOrigin,
    StoredMessage,
    SummaryWrite,
)

if TYPE_CHECKING:  # producers/context.py imports this module
    from compaction.producers.context import Producers

#: an edited summary's bound: far over any summary's budget, well under a request's cap
SUMMARY_MAX_CHARS = 100_000
_SUMMARY: TypeAdapter[str] = TypeAdapter(
    Annotated[str, Field(min_length=1, max_length=SUMMARY_MAX_CHARS, pattern=TEXT_PATTERN)],
    config=ConfigDict(regex_engine="python-re"),  # the pattern's surrogates (core.contract)
)


@dataclass(frozen=True, slots=True)
class AppliedDraft:
    draft: DraftRecord
    applied: AppliedCompaction
    event: CompactionDone


def ready(ctx: Producers, draft_id: int) -> DraftRecord:
    """The draft, refused as ``draft_closed`` unless it can still be applied or edited."""
    draft = ctx.store.get_draft(draft_id)
    if draft.status != "ready":
        raise DraftClosed(
            f"draft {draft_id} is {draft.status}: write a new one (/compact --review)"
        )
    return draft


def edit_draft(ctx: Producers, draft_id: int, summary: Any) -> DraftRecord:
    """The user's text as the summary; applied as written."""
    with as_invalid_request("draft"):
        text = _SUMMARY.validate_python(summary)
    if not text.strip():
        raise InvalidRequest("summary: empty")
    draft = ready(ctx, draft_id)
    if draft.plan.get("summary") is None:
        raise InvalidRequest(f"draft {draft_id} only prunes tool outputs: it has no summary")
    return ctx.store.edit_draft(draft_id, text, recount(ctx, draft, text))


def recount(ctx: Producers, draft: DraftRecord, text: str) -> dict[str, Any] | None:
    """The receipt of the draft with ``text`` as its summary (``compaction.core.receipt``, as
    the worker counts a stage): an edit that drops an identifier shows it as not kept. The span
    is the draft's messages as stored now; the result, the rest of the view and ``text``."""
    if draft.receipt is None:
        return None
    view = ctx.store.load_history(draft.session_id)
    by_id = {stored.id: stored.message for stored in view}
    plan = draft.plan
    gone = [*plan["summary"]["ids"], *plan.get("prunedIds", [])]
    if any(i not in by_id for i in gone):  # stale: applying it is refused anyway
        return draft.receipt
    summary = Message(role="user", content=text)
    kept = [stored.message for stored in view if stored.id not in set(gone)]
    result = CompactionResult(
        messages=[*kept, summary],
        tokens_before=0,
        tokens_after=0,
        summarized=True,
        summary_text=text,
    )
    config = ctx.contexts.resolve(draft.session_id).config(ctx.settings)
    span = [by_id[i] for i in gone]
    return receipt_of(span, result, redact_secrets=config.redact_secrets).lists()


def receipt_counts(draft: DraftRecord) -> Receipt | None:
    """``compaction_done.receipt`` of an applied draft: the counts of its receipt's lists, the
    auxiliary tokens when a model wrote the summary, the cost."""
    lists = draft.receipt
    if not lists:
        return None
    ids, users = lists["identifiers"], lists["userMessages"]
    aux = None
    if draft.plan.get("summarizer") == "model":
        aux = AuxTokens(input=draft.input_tokens or 0, output=draft.output_tokens or 0)
    return Receipt(
        identifiers=Count(kept=ids["kept"], total=ids["total"]),
        user_messages=UserMessageCount(verbatim=users["verbatim"], total=users["total"]),
        aux_tokens=aux,
        cost=draft.cost,
    )


def regenerate_draft(ctx: Producers, draft_id: int, focus: str | None) -> EnqueueResult:
    """A new review of the draft's session with ``focus``; the worker's new draft discards this
    one when it is written."""
    draft = ctx.store.get_draft(draft_id)
    if draft.status == "applied":
        raise DraftClosed(f"draft {draft_id} is applied: undo its run to review again")
    return ctx.request_manual(draft.session_id, focus=focus, review=True)


def _stale(draft: DraftRecord, why: str) -> DraftStale:
    return DraftStale(
        f"draft {draft.id} no longer fits the session ({why}): nothing applied; "
        "regenerate it or compact again"
    )


def recheck(draft: DraftRecord, view: list[StoredMessage]) -> None:
    """After the session's version moved: every message the draft replaces or prunes still
    visible, uncompacted, unpruned and unpinned, and its ``seq`` range holding nothing else (a
    restored run's rows) than those and the pinned ones it keeps."""
    by_id = {stored.id: stored for stored in view}
    summary = draft.plan.get("summary")
    ids: list[int] = summary["ids"] if summary else []
    pruned: list[int] = draft.plan.get("prunedIds", [])
    gone = [i for i in ids if i not in by_id]
    gone += [i for i in pruned if i not in by_id or by_id[i].pruned_at]
    if gone:
        raise _stale(draft, f"{len(gone)} of its messages were compacted or pruned since")
    if any(by_id[i].message.pinned for i in [*ids, *pruned]):
        raise _stale(draft, "a message it replaces was pinned since")
    if summary:
        first, last = summary["firstSeq"], summary["lastSeq"]
        inside = sum(1 for stored in view if first <= stored.seq <= last)
        if inside != summary["expectedRemoved"] + len(summary.get("keptIds", [])):
            raise _stale(draft, "messages were restored inside the span it replaces")


def fits(draft: DraftRecord, now_tokens: int, threshold: int, summary_now: int) -> int:
    """The context's size once applied (the draft's saving, with the summary's text as it is
    now); ``draft_stale`` unless under ``threshold`` or smaller than ``now_tokens``."""
    saving = draft.tokens_before - draft.tokens_after
    saving += int(draft.plan.get("summaryTokens", 0)) - summary_now
    after = now_tokens - saving
    if after >= threshold and after >= now_tokens:
        raise _stale(draft, f"~{after} tokens after it, not under {threshold} nor {now_tokens}")
    return after


def _write(draft: DraftRecord, version: int, figures: tuple[int, int]) -> CompactionWrite:
    plan, summary = draft.plan, draft.plan.get("summary")
    before, after = figures
    payload = {
        "requestId": draft.request_id,
        "stage": plan["stage"],
        "removedCount": summary["expectedRemoved"] if summary else 0,
        "tokensBefore": before,
        "tokensAfter": after,
        "draftId": draft.id,
        **({"summarizer": plan["summarizer"]} if plan.get("summarizer") else {}),
    }
    language = plan.get("language", "en")
    return CompactionWrite(
        origin=RunOrigin(
            session_id=draft.session_id,
            reason="manual",
            request_id=draft.request_id or new_request_id(),
            worker=None,
        ),
        expected_version=version,
        summary=SummaryWrite(
            text=draft.summary,
            first_seq=summary["firstSeq"],
            last_seq=summary["lastSeq"],
            expected_removed=summary["expectedRemoved"],
            kept_ids=tuple(summary.get("keptIds", [])),
        )
        if summary
        else None,
        pruned_ids=plan.get("prunedIds", []),
        language=language,
        tokens_before=before,
        tokens_after=after,
        model=draft.model,
        input_tokens=draft.input_tokens,
        output_tokens=draft.output_tokens,
        durations=plan.get("durations") or {},
        event=EventRow(event_text("done", payload, language), payload),
        receipt=draft.receipt,
        cost=draft.cost,
    )


def apply_draft(ctx: Producers, draft_id: int) -> AppliedDraft:
    """Apply a ready draft in one fenced transaction (the module's doc), then publish
    ``compaction_done`` and the bar's ``token_update``."""
    draft = ready(ctx, draft_id)
    session = ctx.contexts.resolve(draft.session_id)
    version = session.info.compaction_version  # read before the view: the write's fence
    view = ctx.store.load_history(draft.session_id)
    if version != draft.base_version:
        recheck(draft, view)
    config = session.config(ctx.settings)
    now_tokens = sum(token_counts([stored.message for stored in view], config))
    summary_now = summary_tokens(draft.summary, config) if draft.plan.get("summary") else 0
    after = fits(draft, now_tokens, session.threshold_tokens, summary_now)
    write = _write(draft, version, (now_tokens, after))
    try:
        applied = ctx.store.apply_draft(draft_id, write)
    except LockLost:  # another run or an apply of this draft won meanwhile
        ready(ctx, draft_id)
        raise _stale(draft, "the session changed while it was applied") from None
    except InvalidRequest as err:  # the span's rows changed under the re-check
        raise _stale(draft, err.message) from None
    done = CompactionDone(
        session_id=draft.session_id,
        request_id=write.origin.request_id,
        reason="manual",
        stage=draft.plan["stage"],
        removed_count=applied.removed_count,
        summary_message_id=applied.summary_message_id,
        tokens_before=now_tokens,
        tokens_after=after,
        pruned_count=applied.pruned_count,
        run_id=applied.run_id,
        summarizer=draft.plan.get("summarizer"),
        receipt=receipt_counts(draft),
    )
    _publish(ctx, done)
    return AppliedDraft(ctx.store.get_draft(draft_id), applied, done)


def _publish(ctx: Producers, done: CompactionDone) -> None:
    """Best effort: the run is written; a console that misses the event sees it on reload."""
    settings = ctx.settings
    EventPublisher(
        ctx.redis, prefix=settings.channel_prefix, stream_maxlen=settings.events_stream_maxlen
    ).publish(done)
    try:
        ctx.publish_token_update(done.session_id)
    except (CompactionError, redis.RedisError):  # the bar catches up on the next turn
        return


def draft_row(draft: DraftRecord) -> dict[str, Any]:
    """A draft as the API and ``compaction draft show --json`` give it (the plan's ids stay
    inside: what a user reads are its counts)."""
    summary = draft.plan.get("summary")
    return {
        "id": draft.id,
        "session_id": draft.session_id,
        "request_id": draft.request_id,
        "status": draft.status,
        "focus": draft.focus,
        "summary": draft.summary,
        "edited": draft.edited,
        "stage": draft.plan.get("stage"),
        "removed_count": summary["expectedRemoved"] if summary else 0,
        "pruned_count": len(draft.plan.get("prunedIds", [])),
        "tokens_before": draft.tokens_before,
        "tokens_after": draft.tokens_after,
        "receipt": draft.receipt,
        "model": draft.model,
        "input_tokens": draft.input_tokens,
        "output_tokens": draft.output_tokens,
        "cost": draft.cost,
        "run_id": draft.run_id,
        "created_at": draft.created_at,
        "expires_at": draft.expires_at,
    }


def applied_row(applied: AppliedDraft) -> dict[str, Any]:
    """What applying answers: the draft (now ``applied``) and the run it wrote."""
    done = applied.event
    return {
        "draft": draft_row(applied.draft),
        "run_id": applied.applied.run_id,
        "summary_message_id": applied.applied.summary_message_id,
        "removed_count": applied.applied.removed_count,
        "pruned_count": applied.applied.pruned_count,
        "tokens_before": done.tokens_before,
        "tokens_after": done.tokens_after,
    }
