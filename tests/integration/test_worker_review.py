"""Review before apply (docs/architecture.md, "Review"), through RQ's worker on PostgreSQL and
Redis: a review writes a draft and leaves the history as it was; an edited draft applies the
edited text as the summary and undoes like any run; a turn appended after the draft does not
stop it; a compaction between makes it ``draft_stale``; an expired or applied one is
``draft_closed``; a new draft discards the older."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import update

from compaction.core.errors import DraftClosed, DraftStale, InvalidRequest
from compaction.core.messages import Message
from compaction.producers.context import Producers
from compaction.service.keys import events_stream
from compaction.store.models import CompactionDraft, utcnow
from tests.fakes import conversation
from tests.integration.producer_helpers import drain, session_with
from tests.services import stream_entries

FOCUS = "keep the directory names"
EDITED = "Edited by the user: the agent listed /srv/0 to /srv/29 and found one file in each."


def events(ctx: Producers) -> list[dict[str, Any]]:
    stream = events_stream(ctx.settings.channel_prefix)
    return [json.loads(fields[b"event"]) for _id, fields in stream_entries(ctx.redis, stream)]


def history(ctx: Producers, session_id: str) -> list[tuple[Any, ...]]:
    """Every row as the user's history holds it (compacted and pruned marks included)."""
    return [
        (s.id, s.message.content, s.compacted_at, s.pruned_at, s.is_compaction_summary)
        for s in ctx.store.load_history(session_id, "full")
    ]


def reviewed(ctx: Producers, turns: int = 30, focus: str | None = FOCUS) -> tuple[str, int]:
    session_id = session_with(ctx, turns)
    assert ctx.request_manual(session_id, focus=focus, review=True).status == "enqueued"
    drain(ctx)
    (draft,) = [d for d in ctx.session_drafts(session_id) if d.status == "ready"]
    return session_id, draft.id


def test_a_review_writes_a_draft_and_leaves_the_history(ctx: Producers) -> None:
    session_id = session_with(ctx, 30)
    before = history(ctx, session_id)
    queued = ctx.request_manual(session_id, focus=FOCUS, review=True)
    drain(ctx)

    assert history(ctx, session_id) == before
    assert ctx.store.runs(session_id) == []  # no run: nothing was applied
    (draft,) = ctx.session_drafts(session_id)
    assert draft.status == "ready" and draft.request_id == queued.request_id
    assert draft.focus == FOCUS and draft.summary and not draft.edited
    assert draft.base_version == ctx.store.get_session(session_id).compaction_version
    assert draft.tokens_after < draft.tokens_before
    plan = draft.plan
    assert plan["stage"] == "history" and len(plan["summary"]["ids"]) >= 2
    ttl = (draft.expires_at - draft.created_at).total_seconds()
    assert 3_540 < ttl <= 3_600  # COMPACTION_DRAFT_TTL_SECONDS' default, from the worker's clock
    final = [e for e in events(ctx) if e.get("requestId") == queued.request_id][-1]
    assert final["type"] == "compaction_draft" and final["draftId"] == draft.id
    assert final["tokensBefore"] == draft.tokens_before
    assert not any(e["type"] == "compaction_done" for e in events(ctx))
    # the receipt as an applied run's (compaction.core.receipt): its counts on the event
    assert draft.receipt is not None and draft.receipt["identifiers"]["total"] > 0
    assert final["receipt"]["identifiers"]["total"] == draft.receipt["identifiers"]["total"]


def test_edited_then_applied_the_edited_text_is_the_summary_and_undo_restores(
    ctx: Producers,
) -> None:
    session_id, draft_id = reviewed(ctx)
    model_view = [s.message.content for s in ctx.store.load_history(session_id)]
    written = ctx.get_draft(draft_id).receipt
    edited = ctx.edit_draft(draft_id, EDITED)
    assert edited.edited and edited.summary == EDITED
    # counted again on the user's text: the identifiers it dropped are not kept
    assert written is not None and edited.receipt is not None
    assert edited.receipt["identifiers"]["kept"] < written["identifiers"]["kept"]
    assert "/srv/0" in EDITED and "/srv/0" not in str(edited.receipt["identifiers"]["missing"])

    result = ctx.apply_draft(draft_id)

    run = ctx.store.get_run(result.applied.run_id)
    assert run.status == "succeeded" and run.reason == "manual"
    assert result.draft.status == "applied" and result.draft.run_id == run.id
    view = ctx.store.load_history(session_id)
    summaries = [s for s in view if s.is_compaction_summary]
    assert [s.message.content for s in summaries] == [EDITED]
    done = [e for e in events(ctx) if e["type"] == "compaction_done"]
    assert [d["runId"] for d in done] == [run.id]
    assert done[0]["summaryMessageId"] == summaries[0].id
    assert run.receipt == edited.receipt
    assert done[0]["receipt"]["identifiers"]["kept"] == edited.receipt["identifiers"]["kept"]
    display = ctx.store.load_history(session_id, "display")
    assert any((s.metadata or {}).get("runId") == run.id for s in display if s.is_event)

    ctx.store.restore(run.id)
    assert [s.message.content for s in ctx.store.load_history(session_id)] == model_view
    with pytest.raises(DraftClosed):
        ctx.apply_draft(draft_id)


def test_a_turn_appended_after_the_draft_still_applies(ctx: Producers) -> None:
    session_id, draft_id = reviewed(ctx)
    turn = [m for m in conversation(1, system=False, first_turn=90)]
    ctx.store.append_messages(
        session_id,
        [
            Message(
                role=m.role, content=m.content, tool_calls=m.tool_calls, tool_call_id=m.tool_call_id
            )
            for m in turn
        ],
    )
    result = ctx.apply_draft(draft_id)
    contents = [s.message.content for s in ctx.store.load_history(session_id)]
    assert contents[-1] == turn[-1].content  # the new turn kept, after the summary
    assert result.event.tokens_after < result.event.tokens_before


def test_a_compaction_between_makes_the_draft_stale(ctx: Producers) -> None:
    session_id, draft_id = reviewed(ctx)
    ctx.request_manual(session_id)
    drain(ctx)
    before = history(ctx, session_id)
    (run,) = ctx.store.runs(session_id)

    with pytest.raises(DraftStale, match="no longer fits"):
        ctx.apply_draft(draft_id)

    assert history(ctx, session_id) == before
    assert ctx.store.runs(session_id) == [run]
    assert ctx.get_draft(draft_id).status == "ready"


def test_an_expired_draft_is_closed(ctx: Producers) -> None:
    session_id, draft_id = reviewed(ctx)
    with ctx.store.factory() as session, session.begin():
        session.execute(
            update(CompactionDraft)
            .where(CompactionDraft.id == draft_id)
            .values(expires_at=utcnow() - timedelta(seconds=1))
        )
    before = history(ctx, session_id)

    assert ctx.get_draft(draft_id).status == "expired"
    for act in (lambda: ctx.apply_draft(draft_id), lambda: ctx.edit_draft(draft_id, EDITED)):
        with pytest.raises(DraftClosed, match="expired"):
            act()
    assert ctx.store.expire_drafts() == 1
    assert history(ctx, session_id) == before


def test_a_new_draft_discards_the_older_and_discard_closes(ctx: Producers) -> None:
    session_id, first = reviewed(ctx)
    ctx.regenerate_draft(first, focus="only the file names")
    drain(ctx)
    drafts = ctx.session_drafts(session_id)
    assert [d.status for d in drafts] == ["ready", "discarded"]
    assert drafts[0].focus == "only the file names"
    ctx.discard_draft(drafts[0].id)
    with pytest.raises(DraftClosed, match="discarded"):
        ctx.apply_draft(drafts[0].id)


def test_an_edit_is_bounded(ctx: Producers) -> None:
    _session_id, draft_id = reviewed(ctx)
    for bad in ("", "   ", "x" * 100_001, "\ud800", 42):
        with pytest.raises(InvalidRequest):
            ctx.edit_draft(draft_id, bad)  # type: ignore[arg-type]
    assert not ctx.get_draft(draft_id).edited


def test_the_asyncio_twins(ctx: Producers) -> None:
    session_id, draft_id = reviewed(ctx)
    twin = ctx.aio()

    async def steps() -> tuple[list[str], str]:
        listed = [d.status for d in await twin.session_drafts(session_id)]
        await twin.edit_draft(draft_id, EDITED)
        applied = await twin.apply_draft(draft_id)
        return listed, (await twin.get_draft(applied.draft.id)).status

    assert asyncio.run(steps()) == (["ready"], "applied")
    summaries = [s for s in ctx.store.load_history(session_id) if s.is_compaction_summary]
    assert [s.message.content for s in summaries] == [EDITED]


def test_a_pinned_message_stays_and_a_pin_after_the_draft_makes_it_stale(
    ctx: Producers,
) -> None:
    # pinned before the review: the draft keeps it in place (docs/architecture.md, "Pins")
    session_id = session_with(ctx, 30)
    pinned = [s for s in ctx.store.load_history(session_id) if s.message.role == "user"][6]
    ctx.pin(session_id, pinned.id)
    ctx.request_manual(session_id, review=True)
    drain(ctx)
    [draft] = ctx.session_drafts(session_id)
    assert pinned.id in draft.plan["summary"]["keptIds"]
    assert pinned.id not in draft.plan["summary"]["ids"]
    ctx.apply_draft(draft.id)
    view = {s.id: s for s in ctx.store.load_history(session_id)}
    assert pinned.id in view and view[pinned.id].compacted_at is None

    # pinned after the review: one of the messages it would replace, so not applied
    other_id, draft_id = reviewed(ctx)
    target = ctx.get_draft(draft_id).plan["summary"]["ids"][2]
    ctx.pin(other_id, target)
    before = history(ctx, other_id)
    with pytest.raises(DraftStale, match="a message it replaces was pinned since"):
        ctx.apply_draft(draft_id)
    assert history(ctx, other_id) == before
