"""``POST /api/sessions/{id}/messages``: one conversation turn (docs/architecture.md, "The
gateway"; the turn itself is ``gateway/chat.py``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import Field

from compaction.core.errors import NoChatModel
from compaction.gateway.deps import ResourcesDep
from compaction.gateway.responses import ChatChannel, Turn
from compaction.gateway.schemas import ERRORS, Body, ErrorAnswer

#: what a turn may answer besides the refusals every route may
TURN_ERRORS: dict[int | str, dict[str, Any]] = {
    **ERRORS,
    409: {
        "model": ErrorAnswer,
        "description": "no_chat_model: no channel to answer with; busy: a turn of the session "
        "is running (through any gateway), nothing stored",
    },
    502: {
        "model": ErrorAnswer,
        "description": "llm_error: the chat model failed; reply_too_long: its reply is past "
        "the cap, not stored",
    },
    504: {"model": ErrorAnswer, "description": "llm_timeout: the chat model was too slow"},
}
router = APIRouter(tags=["messages"], responses=TURN_ERRORS)


class MessageIn(Body):
    content: str = Field(min_length=1, description="the user's message")
    model: str | None = Field(
        None, description="the model for this turn (else the session's, else its agent's)"
    )


@router.post("/api/sessions/{session_id}/messages")
async def send_message(session_id: str, body: MessageIn, resources: ResourcesDep) -> Turn:
    """Store the user's message, wait for a compaction of the session that is queued or running
    (and start one when the session is past its threshold), call the chat model with the
    compacted view, store its reply and publish ``token_update``. Every socket of the session,
    on every gateway, also gets both messages. One turn of a session at a time: another is
    409 ``busy`` and stores nothing."""
    turn = await resources.turns.take(session_id, body.content, model=body.model)
    return turn.answer()


#: what answers a session's turns: refusals as any route's
choice_router = APIRouter(tags=["messages"], responses=ERRORS)


@choice_router.get("/api/sessions/{session_id}/chat-channel")
def chat_channel(session_id: str, resources: ResourcesDep) -> ChatChannel:
    """Which channel answers the session's chat turns, and why: the agent's chat channel
    (``agent set --chat-channel``), the channel serving the session's model,
    ``COMPACTION_CHAT_CHANNEL``, the offline model; ``none`` when a turn would be refused."""
    session = resources.producers.contexts.resolve(session_id)
    agent_id = session.info.agent_id
    try:
        choice = resources.turns.models.choice(session.agent, session.model)
    except NoChatModel as err:
        return ChatChannel(
            session_id=session_id,
            agent_id=agent_id,
            id=None,
            name=None,
            model=None,
            source="none",
            detail=err.message,
        )
    channel = choice.channel
    return ChatChannel(
        session_id=session_id,
        agent_id=agent_id,
        id=channel.id if channel else None,
        name=channel.name if channel else None,
        model=channel.model if channel else None,
        source=choice.source,
    )
