"""A review's drafts over HTTP (docs/architecture.md, "Review"): read one, edit its summary,
apply, discard, regenerate with another focus, and a session's list. DESIGN §11 proposed
``/api/runs/{id}`` for them; a draft is not a run until applied (its own table), so it has its
own routes. Applying answers the run it wrote, undone as any run (``/api/runs/{id}/restore``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, status
from pydantic import Field

from compaction.gateway.deps import ProducersDep
from compaction.gateway.responses import AppliedDraft, Draft, DraftList, Queued
from compaction.gateway.schemas import ERRORS, Body
from compaction.producers.drafts import SUMMARY_MAX_CHARS, applied_row, draft_row

router = APIRouter(tags=["drafts"], responses=ERRORS)

DraftId = Annotated[int, Path(description="the draft's id")]


class DraftEdit(Body):
    summary: str = Field(
        max_length=SUMMARY_MAX_CHARS, description="the summary to apply instead (not blank)"
    )


class DraftRegenerate(Body):
    focus: str | None = Field(None, description="what the new summary should keep above all")


@router.get("/api/sessions/{session_id}/drafts")
def session_drafts(ctx: ProducersDep, session_id: str) -> DraftList:
    """The session's drafts, the newest first (at most one ``ready``)."""
    return DraftList(drafts=[Draft.of(draft_row(d)) for d in ctx.session_drafts(session_id)])


@router.get("/api/drafts/{draft_id}")
def get_draft(ctx: ProducersDep, draft_id: DraftId) -> Draft:
    return Draft.of(draft_row(ctx.get_draft(draft_id)))


@router.put("/api/drafts/{draft_id}")
def edit_draft(ctx: ProducersDep, draft_id: DraftId, body: DraftEdit) -> Draft:
    """The user's text as the summary (``edited``): applied as written. 409 ``draft_closed``
    once the draft is applied, discarded or expired."""
    return Draft.of(draft_row(ctx.edit_draft(draft_id, body.summary)))


@router.post("/api/drafts/{draft_id}/apply")
def apply_draft(ctx: ProducersDep, draft_id: DraftId) -> AppliedDraft:
    """Apply in one fenced transaction: 409 ``draft_stale`` when the session changed and the
    draft no longer fits, 409 ``draft_closed`` when it is not ready; nothing changes then."""
    return AppliedDraft.of(applied_row(ctx.apply_draft(draft_id)))


@router.post("/api/drafts/{draft_id}/discard")
def discard_draft(ctx: ProducersDep, draft_id: DraftId) -> Draft:
    return Draft.of(draft_row(ctx.discard_draft(draft_id)))


@router.post("/api/drafts/{draft_id}/regenerate", status_code=status.HTTP_202_ACCEPTED)
def regenerate_draft(
    ctx: ProducersDep, draft_id: DraftId, body: DraftRegenerate | None = None
) -> Queued:
    """A new review of the draft's session with ``focus``: its ``compaction_draft`` event names
    the new draft, which discards this one when written."""
    focus = body.focus if body is not None else None
    queued = ctx.regenerate_draft(draft_id, focus=focus)
    return Queued(status=queued.status, request_id=queued.request_id)
