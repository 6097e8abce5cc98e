"""``POST /api/sessions/{id}/messages``: one conversation turn (docs/architecture.md, "The
gateway"; the turn itself is ``gateway/chat.py``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from gateway.deps import ResourcesDep

router = APIRouter(tags=["messages"])


class MessageIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    content: str = Field(min_length=1, description="the user's message")
    model: str | None = Field(
        None, description="the model for this turn (else the session's, else its agent's)"
    )


@router.post("/api/sessions/{session_id}/messages")
async def send_message(session_id: str, body: MessageIn, resources: ResourcesDep) -> dict[str, Any]:
    """Store the user's message, wait for a compaction of the session that is queued or running
    (and start one when the session is past its threshold), call the chat model with the
    compacted view, store its reply and publish ``token_update``. Answers ``{"reply": history
    row, "ensured": {"status", "usedTokens"}, "usage": {"inputTokens", "outputTokens",
    "totalTokens", "apiCalls"}}``; every socket of the session also gets both messages."""
    turn = await resources.turns.take(session_id, body.content, model=body.model)
    return turn.to_json()
