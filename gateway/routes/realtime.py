"""A session's live objects (docs/architecture.md, "The gateway"): its events in the wire
format (``compaction_start``/``done``/``failed``/``skipped``, ``token_update``), each message
the gateway stores (``{"type": "message", "message": history row}``) and errors (``{"type":
"error", "error": {"code", "message"}}``), over a WebSocket (``/ws/sessions/{id}``, which also
takes ``{"type": "compact", "focus"?, "sessionId"?}`` and ``{"type": "message", "content",
"model"?}``) or Server-Sent Events (``/api/sessions/{id}/events``, which also sends each
compaction start and done that carries a stage under the ``context_compact_*`` names:
``seed_event``). Both read the process's event hub.

A client that falls too far behind is disconnected (WebSocket close code 1013, or the end of the
event stream): it reconnects and reloads the history. A socket has one turn at a time: a message
sent while its turn runs is answered with a ``busy`` error object, and closing the socket
cancels a turn that has not called the model yet (``chat.SocketTurn``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Request, WebSocket
from fastapi.responses import StreamingResponse
from pydantic import Field, TypeAdapter
from redis.exceptions import RedisError

from compaction.core.contract import AnyEvent, CompactionDone, CompactionStart, Stage
from compaction.core.errors import (
    Busy,
    CompactionError,
    InvalidRequest,
    SessionNotFound,
    as_invalid_request,
)
from compaction.gateway.chat import SocketTurn
from compaction.gateway.hub import Delivery, Subscription
from compaction.gateway.resources import Resources
from compaction.gateway.routes.chat import MessageIn
from compaction.gateway.schemas import ERRORS, CompactRequest
from compaction.service import logs

log = logs.get_logger(__name__)
router = APIRouter(tags=["events"])

#: an SSE comment this often keeps proxies from closing an idle stream
HEARTBEAT_S = 15.0
#: WebSocket close codes: the client fell behind, the session does not exist, shutting down
TOO_SLOW, NO_SESSION, GOING_AWAY = 1013, 4404, 1001


def error(err: Exception) -> Delivery:
    """An error object for one client; a bug is logged, its text never sent."""
    if isinstance(err, CompactionError):
        return Delivery({"type": "error", "error": {"code": err.code, "message": err.message}})
    if isinstance(err, RedisError):  # as the API answers it (gateway/errors.py)
        message = f"Redis failed: {type(err).__name__}"
        return Delivery({"type": "error", "error": {"code": "redis", "message": message}})
    log.error("socket request failed", error=repr(err))
    return Delivery({"type": "error", "error": {"code": "internal_error", "message": "failed"}})


@router.websocket("/ws/sessions/{session_id}")
async def session_socket(websocket: WebSocket, session_id: str) -> None:
    resources: Resources = websocket.app.state.resources
    # Subscribed before the handshake ends: what is published once the client is connected
    # reaches it.
    with resources.hub.subscribe(session_id) as subscription:
        await websocket.accept()
        if not await asyncio.to_thread(resources.producers.store.session_exists, session_id):
            found = error(SessionNotFound(f"session {session_id!r} not found"))
            await websocket.send_text(found.text)
            await websocket.close(NO_SESSION)
            return
        client = _Client(subscription)
        tasks = {
            asyncio.create_task(_send(websocket, subscription)),
            asyncio.create_task(_receive(websocket, resources, client)),
            # a client too slow to read may hold ``_send`` in a send: this ends it anyway
            asyncio.create_task(subscription.stopped.wait()),
        }
        try:
            _done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if client.turn is not None:
                client.turn.abandon()  # no model call once its socket has gone
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
    if subscription.ended:  # fell behind, or the gateway is stopping
        await _close(websocket, TOO_SLOW if resources.hub.running else GOING_AWAY)


async def _send(websocket: WebSocket, subscription: Subscription) -> None:
    while (delivery := await subscription.next()) is not None:
        await websocket.send_text(delivery.text)


class _Client:
    """One socket's state: its subscription, and its turn (one at a time)."""

    def __init__(self, subscription: Subscription) -> None:
        self.subscription = subscription
        self.turn: SocketTurn | None = None


async def _receive(websocket: WebSocket, resources: Resources, client: _Client) -> None:
    """The client's requests, until it disconnects. A turn runs as a task of its own, so a
    ``compact`` sent while a message waits is handled at once."""
    while True:
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            return
        text = message.get("text") or (message.get("bytes") or b"").decode("utf-8", "replace")
        try:
            await _handle(resources, client, text)
        except Exception as err:
            client.subscription.offer(error(err))


class SocketCompact(CompactRequest):
    """The seed's own client message (§6) may name the session; it must be the socket's."""

    type: Literal["compact"]
    session_id: str | None = None


class SocketMessage(MessageIn):
    type: Literal["message"]


_REQUESTS: TypeAdapter[SocketCompact | SocketMessage] = TypeAdapter(
    Annotated[SocketCompact | SocketMessage, Field(discriminator="type")]
)


async def _handle(resources: Resources, client: _Client, text: str) -> None:
    session_id = client.subscription.session_id
    with as_invalid_request("socket message"):
        request = _REQUESTS.validate_json(text)
    if isinstance(request, SocketCompact):
        if request.session_id not in (None, session_id):
            raise InvalidRequest("sessionId: not this socket's session")
        await resources.producers.aio().request_manual(
            session_id, focus=request.focus or None, review=request.review
        )
        return
    before = client.turn.task if client.turn is not None else None
    if client.turn is not None and before is not None and not before.done():
        if not client.turn.replied:  # no queue of turns behind it
            raise Busy("this socket's turn is still running: send again once it has answered")
        # its reply is on the client's screen: only its figures are left to record, and a user
        # who answers at once is not refused for them
        await asyncio.wait({before})

    def failed(err: Exception) -> None:
        client.subscription.offer(error(err))

    client.turn = resources.turns.start(
        session_id, request.content, model=request.model, on_error=failed
    )


async def _close(websocket: WebSocket, code: int) -> None:
    with contextlib.suppress(RuntimeError):  # already closed by the client
        await websocket.close(code)


@router.get(
    "/api/sessions/{session_id}/events",
    response_class=StreamingResponse,
    responses={
        **ERRORS,
        200: {
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
            "description": "event: <type>, data: <JSON object> per object; ': ping' comments",
        },
    },
)
async def session_events(session_id: str, request: Request) -> StreamingResponse:
    """The session's live objects as Server-Sent Events (``event: <type>``, ``data: <JSON>``;
    a ``: ping`` comment every 15 s); the same objects as the WebSocket sends, and after each
    compaction start or done with a stage, the same as ``context_compact_start``/``done``."""
    resources: Resources = request.app.state.resources
    if not await asyncio.to_thread(resources.producers.store.session_exists, session_id):
        raise SessionNotFound(f"session {session_id!r} not found")
    return StreamingResponse(
        _events(resources, session_id),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


async def _events(resources: Resources, session_id: str) -> AsyncIterator[str]:
    with resources.hub.subscribe(session_id) as subscription:
        # first, so a client knows from when on it misses nothing
        yield ": subscribed\n\n"
        while True:
            try:
                async with asyncio.timeout(HEARTBEAT_S):
                    delivery = await subscription.next()
            except TimeoutError:
                yield ": ping\n\n"
                continue
            if delivery is None:
                return
            yield f"event: {delivery.type}\ndata: {delivery.text}\n\n"
            if (seed := seed_event(delivery.event)) is not None:
                yield f"event: {seed['type']}\ndata: {json.dumps(seed)}\n\n"


#: the segments under the names clients of the context_compact_* events know
SEED_STAGES: dict[Stage, str] = {"history": "compact_msg1", "loop": "compact_msg2"}


def seed_event(event: AnyEvent | None) -> dict[str, Any] | None:
    """A compaction start or done that carries its stage, also as ``context_compact_start`` /
    ``context_compact_done`` (docs/architecture.md, "Events"); anything else: None."""
    if not isinstance(event, CompactionStart | CompactionDone) or event.stage is None:
        return None
    kind = "start" if isinstance(event, CompactionStart) else "done"
    seed: dict[str, Any] = {
        "type": f"context_compact_{kind}",
        "sessionId": event.session_id,
        "requestId": event.request_id,
        "stage": SEED_STAGES[event.stage],
    }
    if isinstance(event, CompactionDone):
        seed |= {"tokensBefore": event.tokens_before, "tokensAfter": event.tokens_after}
    return seed
