"""Pins (docs/architecture.md, "Pins"): pin or unpin a stored message, one home for HTTP and the
command line. A pin that, with the other pins and the system prompt, would reach the session's
threshold is refused (``pins_over_threshold``: ``compaction.core.pins.check_pins``, checked in
the store's transaction on the view the pin would leave); nothing changes then."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from compaction.core.boundaries import token_counts
from compaction.core.messages import Message
from compaction.core.pins import check_pins, pinned_tokens
from compaction.core.tokens import estimate_tokens
from compaction.store.pins import PinChange

if TYPE_CHECKING:  # producers/context.py imports this module
    from compaction.producers.context import Producers


def set_pinned(ctx: Producers, session_id: str, message_id: int, pinned: bool) -> dict[str, Any]:
    """Pin (or unpin) ``message_id`` of ``session_id``; the answer names the message, its
    state, whether it changed, and the session's pinned tokens afterwards."""
    config = ctx.contexts.resolve(session_id).config(ctx.settings)

    def check(messages: Sequence[Message]) -> None:
        check_pins(messages, token_counts(messages, config), config.threshold_tokens)

    change = ctx.store.set_pinned(session_id, message_id, pinned, check)
    return answer(ctx, session_id, change)


def answer(ctx: Producers, session_id: str, change: PinChange) -> dict[str, Any]:
    messages = [stored.message for stored in ctx.store.load_history(session_id)]
    counts = [estimate_tokens(m, ctx.estimator) for m in messages]
    return {
        "sessionId": session_id,
        "messageId": change.message_id,
        "pinned": change.pinned,
        "changed": change.changed,
        "pinnedTokens": pinned_tokens(messages, counts),
    }
