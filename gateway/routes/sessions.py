"""Sessions over HTTP (docs/architecture.md, "The gateway"): list, create, import a transcript,
the history in its three views, ``/compact`` and the context figures, as the command line's
``import``, ``history --json``, ``compact`` and ``stats --json`` give them."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Path, Query, status

from compaction.gateway.deps import ProducersDep, StoreDep
from compaction.gateway.schemas import ERRORS, CompactRequest, NewSession, View
from compaction.producers.transcripts import parse_transcript, store_transcript
from compaction.producers.views import history_rows
from compaction.store.listing import MAX_LISTED

router = APIRouter(tags=["sessions"], responses=ERRORS)

SessionId = Annotated[str, Path(description="the session's id")]


@router.get("/api/sessions")
def list_sessions(
    ctx: ProducersDep, limit: Annotated[int, Query(ge=1, le=MAX_LISTED)] = 100
) -> dict[str, Any]:
    """The newest sessions first, with their tokens, threshold and standing compactions."""
    return {"sessions": ctx.session_items(limit)}


@router.post("/api/sessions", status_code=status.HTTP_201_CREATED)
def create_session(ctx: ProducersDep, body: NewSession) -> dict[str, Any]:
    """A new session (its agent created with blank settings if missing), holding ``messages``
    if given: checked as ``compaction import`` checks a transcript. A taken id is 409."""
    messages = parse_transcript(body.messages, "messages")
    session_id = store_transcript(
        ctx.store,
        messages,
        session_id=body.id,
        agent_id=body.agent_id,
        model=body.model,
        append=False,
        source="messages",
    )
    return {"id": session_id}


@router.get("/api/sessions/{session_id}")
def get_session(ctx: ProducersDep, session_id: SessionId) -> dict[str, Any]:
    """The session as the list shows it."""
    listed = ctx.store.session_listing(session_id)
    compactions = ctx.store.compaction_counts([session_id]).get(session_id, 0)
    return ctx.session_item(listed, compactions)


@router.post("/api/sessions/{session_id}/import")
def import_transcript(
    store: StoreDep,
    session_id: SessionId,
    transcript: Annotated[
        list[dict[str, Any]], Body(description="an OpenAI-format JSON list of messages")
    ],
    agent_id: Annotated[
        str | None, Query(alias="agentId", description="a new session's agent")
    ] = None,
) -> dict[str, Any]:
    """Append a transcript (the session is created if missing), as ``compaction import
    --session``: a transcript that would not continue the stored conversation validly is
    refused whole, nothing stored."""
    messages = parse_transcript(transcript, "the body")
    stored = store_transcript(
        store, messages, session_id=session_id, agent_id=agent_id, source="the body"
    )
    return {"id": stored, "imported": len(messages)}


@router.get("/api/sessions/{session_id}/history")
def history(store: StoreDep, session_id: SessionId, view: View = "compacted") -> dict[str, Any]:
    """``compacted``: what the model gets; ``display``: that with the compaction events, the
    user's screen after a reload; ``full``: every row, compacted ones marked."""
    rows = history_rows(store.load_history(session_id, view))
    return {"sessionId": session_id, "view": view, "messages": rows}


@router.post("/api/sessions/{session_id}/compact", status_code=status.HTTP_202_ACCEPTED)
def compact(
    ctx: ProducersDep, session_id: SessionId, body: CompactRequest | None = None
) -> dict[str, Any]:
    """``/compact``: a manual compaction queued for the workers (``enqueued``), or the
    session's queued auto request made manual (``upgraded``); ``already_pending`` when a
    manual one is queued already. The outcome comes as events (WebSocket, SSE)."""
    focus = body.focus if body is not None else None
    queued = ctx.request_manual(session_id, focus=focus)
    return {"status": queued.status, "requestId": queued.request_id}


@router.get("/api/sessions/{session_id}/context-stats")
def context_stats(ctx: ProducersDep, session_id: SessionId) -> dict[str, Any]:
    """``compaction stats --json``: tokens by role and by segment (system, history, loop,
    state), threshold and budget, last run, the latest turns' figures and decisions."""
    return ctx.session_stats(session_id)


@router.get("/api/v1/agent/context-stats", tags=["compatibility"])
def agent_context_stats(
    ctx: ProducersDep, conversation_id: Annotated[str, Query(description="the session's id")]
) -> dict[str, Any]:
    """The same figures at the path agent frameworks call."""
    return ctx.session_stats(conversation_id)
