"""``token_update`` (docs/architecture.md, "Events"): the figures behind the UI's context bar.

``current`` is the user's model usage: the gateway's ``usage``, remembered so that the worker's
``token_update`` after a compaction repeats it (and so does a later update that passes none).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from compaction.core.contract import ContextUsage, TokenUpdate, TokenUsage
from compaction.core.errors import as_invalid_request
from compaction.producers.trigger import resolve_written, used_tokens
from compaction.service.events import EventPublisher
from compaction.service.gate import session_warning
from compaction.service.usage import last_usage, remember_usage
from compaction.store import SessionInfo

if TYPE_CHECKING:  # producers/context.py imports this module
    from compaction.producers.context import Producers


def token_update(
    ctx: Producers,
    session_id: str,
    *,
    model: str | None = None,
    usage: TokenUsage | Mapping[str, int] | None = None,
    info: SessionInfo | None = None,
) -> TokenUpdate:
    """``info``: the session's row as the caller's append just left it, instead of a read."""
    current = _usage(ctx, session_id, usage)
    session = (
        ctx.contexts.resolve(session_id, model=model)
        if info is None
        else resolve_written(ctx, info, model)
    )
    used, _system = used_tokens(ctx, session, None, None)
    compactions = ctx.standing.of(ctx.store, session.info)
    return TokenUpdate(
        session_id=session_id,
        current=current,
        context=ContextUsage(
            used_tokens=used,
            max_tokens=session.window,
            percent=round(min(100.0, 100 * used / session.window), 1),
            threshold_percent=session.threshold_percent,
            compactions=compactions,
        ),
        # past the warning level: how far to the threshold (docs/architecture.md, "The gate")
        warning=session_warning(ctx.store, session, used),
    )


def _usage(
    ctx: Producers, session_id: str, usage: TokenUsage | Mapping[str, int] | None
) -> TokenUsage:
    if usage is None:
        return last_usage(ctx.redis, ctx.settings.channel_prefix, session_id)
    with as_invalid_request("usage"):
        return usage if isinstance(usage, TokenUsage) else TokenUsage.model_validate(usage)


def publish_token_update(
    ctx: Producers,
    session_id: str,
    *,
    model: str | None = None,
    usage: TokenUsage | Mapping[str, int] | None = None,
    info: SessionInfo | None = None,
) -> TokenUpdate:
    event = token_update(ctx, session_id, model=model, usage=usage, info=info)
    if usage is not None:
        remember_usage(ctx.redis, ctx.settings.channel_prefix, session_id, event.current)
    EventPublisher(
        ctx.redis,
        prefix=ctx.settings.channel_prefix,
        stream_maxlen=ctx.settings.events_stream_maxlen,
    ).publish(event)
    return event
