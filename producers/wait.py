"""Holding the user's next message while a compaction runs (docs/architecture.md, "Events")."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from compaction.core.contract import AnyEvent
from compaction.producers.relay import EventRelay
from compaction.service.events import final_among, is_final_for
from compaction.service.queue import queued_or_running

if TYPE_CHECKING:  # producers/context.py imports this module
    from compaction.producers.context import Producers

#: stream entries searched for a final event published before the wait started
RECENT = 500


def no_final_event(session_id: str, timeout: float) -> str:
    return f"no final event for session {session_id!r} within {timeout:g} s"


def wait_for_compaction(ctx: Producers, session_id: str, timeout: float = 60.0) -> AnyEvent | None:
    """The final event (done, failed or skipped) of the pending or running request of the
    session; ``None`` when nothing is pending or running; ``TimeoutError`` past ``timeout``."""
    request_id = queued_or_running(ctx.redis, ctx.settings.channel_prefix, session_id)
    if request_id is None:
        return None
    return wait_for_request(ctx, session_id, request_id, timeout)


def wait_for_request(
    ctx: Producers, session_id: str, request_id: str, timeout: float = 60.0
) -> AnyEvent:
    """The final event of one request, even if it came before this call started."""
    with EventRelay(session_id, ctx=ctx) as relay:
        recent: Any = relay.client.xrevrange(relay.stream, count=RECENT)
        found = final_among(recent, session_id, request_id)
        if found is not None:
            return found
        for event in relay.events(timeout):
            if is_final_for(event, session_id, request_id):
                return event
    raise TimeoutError(no_final_event(session_id, timeout))
