"""Pins over HTTP (docs/architecture.md, "Pins"): pin and unpin a stored message, as
``compaction pin`` and ``compaction unpin`` do (``producers.pins``)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path

from compaction.gateway.deps import ProducersDep
from compaction.gateway.responses import Pin
from compaction.gateway.schemas import ERRORS, ErrorAnswer

router = APIRouter(tags=["sessions"], responses=ERRORS)

SessionId = Annotated[str, Path(description="the session's id")]
MessageId = Annotated[int, Path(description="the message's id (a history row's id)")]
PIN_PATH = "/api/sessions/{session_id}/messages/{message_id}/pin"
#: the pin's own refusal, beside the shared 409 (docs/architecture.md, "Pins")
_OVER: dict[int | str, dict[str, Any]] = {
    409: {
        "model": ErrorAnswer,
        "description": "pins_over_threshold: the pins with the system prompt would reach the "
        "session's threshold; nothing changed",
    }
}


@router.post(PIN_PATH, responses=_OVER)
def pin(ctx: ProducersDep, session_id: SessionId, message_id: MessageId) -> Pin:
    """Pin a message: no compaction summarizes or prunes it, nor the tool call or results it
    forms a step with. A summary, or a message folded into one, is 400; unknown ids 404."""
    return Pin.of(ctx.pin(session_id, message_id))


@router.delete(PIN_PATH)
def unpin(ctx: ProducersDep, session_id: SessionId, message_id: MessageId) -> Pin:
    """Unpin a message: later compactions may summarize it again."""
    return Pin.of(ctx.unpin(session_id, message_id))
