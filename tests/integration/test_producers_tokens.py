"""The token_update a gateway publishes (producers/tokens.py): its figures, and usage that is
not token counts refused with the project's error, nothing published."""

from __future__ import annotations

import pytest

from compaction.errors import InvalidRequest
from producers.context import Producers
from producers.relay import EventRelay
from producers.tokens import publish_token_update
from tests.integration.producer_helpers import session_with


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
    with pytest.raises(InvalidRequest, match="invalid usage: inputTokens"):
        publish_token_update(ctx, session_id, usage={"inputTokens": "many"})
    assert list(relay.events(timeout=0.3)) == []
    relay.close()
