"""``token_update`` (docs/architecture.md, "Events"): the figures behind the UI's context bar."""

from __future__ import annotations

from collections.abc import Mapping

from compaction.contract import ContextUsage, TokenUpdate, TokenUsage
from compaction.errors import as_invalid_request
from producers.context import Producers
from producers.trigger import used_tokens
from service.events import EventPublisher


def token_update(
    ctx: Producers,
    session_id: str,
    *,
    model: str | None = None,
    usage: TokenUsage | Mapping[str, int] | None = None,
) -> TokenUpdate:
    with as_invalid_request("usage"):
        current = usage if isinstance(usage, TokenUsage) else TokenUsage.model_validate(usage or {})
    session = ctx.contexts.resolve(session_id, model=model)
    used, _system = used_tokens(ctx, session, None, None)
    return TokenUpdate(
        session_id=session_id,
        current=current,
        context=ContextUsage(
            used_tokens=used,
            max_tokens=session.window,
            percent=round(min(100.0, 100 * used / session.window), 1),
            threshold_percent=session.threshold_percent,
        ),
    )


def publish_token_update(
    ctx: Producers,
    session_id: str,
    *,
    model: str | None = None,
    usage: TokenUsage | Mapping[str, int] | None = None,
) -> TokenUpdate:
    event = token_update(ctx, session_id, model=model, usage=usage)
    EventPublisher(
        ctx.redis,
        prefix=ctx.settings.channel_prefix,
        stream_maxlen=ctx.settings.events_stream_maxlen,
    ).publish(event)
    return event
