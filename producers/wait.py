"""Holding the user's next message while a compaction runs (seed §9)."""

from __future__ import annotations

from typing import Any

from compaction.contract import FINAL_EVENTS, AnyEvent, events_stream
from producers.context import Producers
from producers.enqueue import pending_request, running_request
from producers.relay import EventRelay, _event

RECENT = 500  # stream entries searched for a final event published before we started


def wait_for_compaction(ctx: Producers, session_id: str, timeout: float = 60.0) -> AnyEvent | None:
    """The final event (done, failed or skipped) of the pending or running request of the
    session; ``None`` when nothing is pending or running; ``TimeoutError`` past ``timeout``."""
    request_id = pending_request(ctx, session_id) or running_request(ctx, session_id)
    if request_id is None:
        return None
    return wait_for_request(ctx, session_id, request_id, timeout)


def wait_for_request(
    ctx: Producers, session_id: str, request_id: str, timeout: float = 60.0
) -> AnyEvent:
    """The final event of one request, even if it came before this call started."""
    with EventRelay(session_id, ctx=ctx) as relay:
        recent: Any = relay.client.xrevrange(
            events_stream(ctx.settings.channel_prefix), count=RECENT
        )
        for _entry, fields in recent or []:
            event = _event(fields)
            if event is not None and is_final_for(event, session_id, request_id):
                return event
        for event in relay.events(timeout):
            if is_final_for(event, session_id, request_id):
                return event
    raise TimeoutError(f"no final event for session {session_id!r} within {timeout:g} s")


def is_final_for(event: AnyEvent, session_id: str, request_id: str) -> bool:
    return (
        event.type in FINAL_EVENTS
        and event.session_id == session_id
        and (request_id == "unknown" or event.request_id == request_id)
    )
