"""Sessions over HTTP (docs/architecture.md, "The gateway"): list, create, import a transcript,
the history in its three views, ``/compact`` and the context figures, as the command line's
``import``, ``history --json``, ``compact`` and ``stats --json`` give them."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Path, Query, status

from compaction.core.contract import Name
from compaction.gateway.deps import ProducersDep, StoreDep
from compaction.gateway.responses import (
    ContextStats,
    CreatedSession,
    History,
    HistoryRow,
    Imported,
    Queued,
    SessionItem,
    SessionList,
)
from compaction.gateway.schemas import ERRORS, CompactRequest, NewSession, SessionUpdate, View
from compaction.producers.transcripts import parse_transcript, store_transcript
from compaction.producers.views import history_rows
from compaction.store.listing import MAX_LISTED

router = APIRouter(tags=["sessions"], responses=ERRORS)

SessionId = Annotated[str, Path(description="the session's id")]


@router.get("/api/sessions")
def list_sessions(
    ctx: ProducersDep, limit: Annotated[int, Query(ge=1, le=MAX_LISTED)] = 100
) -> SessionList:
    """The newest sessions first, with their tokens, threshold and standing compactions."""
    return SessionList(sessions=[SessionItem.of(item) for item in ctx.session_items(limit)])


@router.post("/api/sessions", status_code=status.HTTP_201_CREATED)
def create_session(ctx: ProducersDep, body: NewSession) -> CreatedSession:
    """A new session (its agent created with blank settings if missing), holding ``messages``
    if given: checked as ``compaction import`` checks a transcript. A taken id is 409."""
    messages = parse_transcript(body.messages, "messages")
    session_id = store_transcript(
        ctx.store,
        ctx.settings,
        messages,
        session_id=body.id,
        agent_id=body.agent_id,
        model=body.model,
        append=False,
        source="messages",
        title=body.title,
    )
    return CreatedSession(id=session_id)


@router.get("/api/sessions/{session_id}")
def get_session(ctx: ProducersDep, session_id: SessionId) -> SessionItem:
    """The session as the list shows it."""
    listed = ctx.store.session_listing(session_id)
    compactions = ctx.store.compaction_counts([session_id]).get(session_id, 0)
    return SessionItem.of(ctx.session_item(listed, compactions))


@router.patch("/api/sessions/{session_id}")
def rename_session(ctx: ProducersDep, session_id: SessionId, body: SessionUpdate) -> SessionItem:
    """Rename the session (``compaction session rename``): ``title`` by the name rule, ``null``
    clears it. The session as the list shows it."""
    ctx.store.rename_session(session_id, body.title)
    return get_session(ctx, session_id)


@router.post("/api/sessions/{session_id}/import")
def import_transcript(
    ctx: ProducersDep,
    session_id: SessionId,
    transcript: Annotated[
        list[dict[str, Any]], Body(description="an OpenAI-format JSON list of messages")
    ],
    agent_id: Annotated[
        Name | None, Query(alias="agentId", description="a new session's agent")
    ] = None,
    title: Annotated[
        Name | None,
        Query(
            description="the session's name (the console sends the file's): names a new "
            "session, renames an existing one"
        ),
    ] = None,
) -> Imported:
    """Append a transcript (the session is created if missing), as ``compaction import
    --session``: a transcript that would not continue the stored conversation validly is
    refused whole, nothing stored."""
    messages = parse_transcript(transcript, "the body")
    stored = store_transcript(
        ctx.store,
        ctx.settings,
        messages,
        session_id=session_id,
        agent_id=agent_id,
        source="the body",
        title=title,
    )
    return Imported(id=stored, imported=len(messages))


@router.get("/api/sessions/{session_id}/history")
def history(store: StoreDep, session_id: SessionId, view: View = "compacted") -> History:
    """``compacted``: what the model gets; ``display``: that with the compaction events, the
    user's screen after a reload; ``full``: every row, compacted ones marked."""
    rows = history_rows(store.load_history(session_id, view))
    return History(session_id=session_id, view=view, messages=[HistoryRow.of(r) for r in rows])


@router.post("/api/sessions/{session_id}/compact", status_code=status.HTTP_202_ACCEPTED)
def compact(ctx: ProducersDep, session_id: SessionId, body: CompactRequest | None = None) -> Queued:
    """``/compact``: a manual compaction queued for the workers (``enqueued``), or the
    session's queued auto request made manual (``upgraded``); ``already_pending`` when a
    manual one is queued already. The outcome comes as events (WebSocket, SSE)."""
    focus = body.focus if body is not None else None
    review = body.review if body is not None else False
    queued = ctx.request_manual(session_id, focus=focus, review=review)
    return Queued(status=queued.status, request_id=queued.request_id)


@router.get("/api/sessions/{session_id}/context-stats")
def context_stats(ctx: ProducersDep, session_id: SessionId) -> ContextStats:
    """``compaction stats --json``: tokens by role and by segment (system, history, loop,
    state), threshold and budget, last run, the latest turns' figures and decisions."""
    return ContextStats.of(ctx.session_stats(session_id))


@router.get("/api/v1/agent/context-stats", tags=["compatibility"])
def agent_context_stats(
    ctx: ProducersDep, conversation_id: Annotated[str, Query(description="the session's id")]
) -> ContextStats:
    """The same figures at the path agent frameworks call."""
    return ContextStats.of(ctx.session_stats(conversation_id))
