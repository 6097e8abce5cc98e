"""The token_update a gateway publishes (producers/tokens.py): its figures, the user's model usage
remembered (the worker's update repeats it) and the session's compactions counted, and usage
that is not token counts refused with the project's error, nothing published nor remembered."""

from __future__ import annotations

from typing import Any

import pytest

from compaction.core.contract import TokenUsage
from compaction.core.errors import InvalidRequest
from compaction.producers.context import Producers
from compaction.producers.relay import EventRelay
from compaction.producers.tokens import publish_token_update
from compaction.producers.trigger import request_manual
from compaction.service.usage import last_usage
from tests.integration.producer_helpers import drain, session_with


def test_token_update_figures(ctx: Producers) -> None:
    session_id = session_with(ctx, 10)
    relay = EventRelay(session_id, ctx=ctx)
    event = publish_token_update(
        ctx,
        session_id,
        usage={"inputTokens": 120, "outputTokens": 30, "totalTokens": 150, "apiCalls": 2},
    )
    wire = event.to_wire()
    assert wire["context"]["maxTokens"] == 4_000 and wire["context"]["thresholdPercent"] == 70
    assert wire["context"]["estimated"] is True
    assert wire["context"]["percent"] == round(100 * wire["context"]["usedTokens"] / 4_000, 1)
    assert wire["current"] == {
        "inputTokens": 120,
        "outputTokens": 30,
        "totalTokens": 150,
        "apiCalls": 2,
    }
    assert [e.type for e in relay.events(timeout=0.5)] == ["token_update"]
    relay.close()


def test_usage_that_is_not_token_counts_is_refused_and_not_published(ctx: Producers) -> None:
    session_id = session_with(ctx, 2)
    relay = EventRelay(session_id, ctx=ctx)
    json_usage: dict[str, Any] = {"inputTokens": "many"}  # a caller's JSON: no type checks it
    with pytest.raises(InvalidRequest, match="invalid usage: inputTokens"):
        publish_token_update(ctx, session_id, usage=json_usage)
    assert list(relay.events(timeout=0.3)) == []
    relay.close()


def test_the_usage_is_remembered_and_the_compactions_counted(ctx: Producers) -> None:
    session_id = session_with(ctx, 12)
    prefix = ctx.settings.channel_prefix
    first = publish_token_update(ctx, session_id, usage={"inputTokens": 900, "outputTokens": 40})
    assert first.context.compactions == 0
    assert last_usage(ctx.redis, prefix, session_id) == first.current
    assert first.current.input_tokens == 900
    # a later update without usage repeats the user's model usage, not zeros
    assert publish_token_update(ctx, session_id).current == first.current
    request_manual(ctx, session_id)
    drain(ctx)
    after = publish_token_update(ctx, session_id, usage={"inputTokens": 500})
    assert after.context.compactions == 1
    assert last_usage(ctx.redis, prefix, session_id).input_tokens == 500
    ctx.store.restore(ctx.store.runs(session_id)[-1].id)  # undone: it no longer counts
    assert publish_token_update(ctx, session_id).context.compactions == 0


def test_usage_is_not_remembered_when_refused(ctx: Producers) -> None:
    session_id = session_with(ctx, 2)
    json_usage: dict[str, Any] = {"outputTokens": "some"}  # a caller's JSON: no type checks it
    with pytest.raises(InvalidRequest):
        publish_token_update(ctx, session_id, usage=json_usage)
    assert last_usage(ctx.redis, ctx.settings.channel_prefix, session_id) == TokenUsage()
