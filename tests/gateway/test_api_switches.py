"""The second seed's switches over HTTP (docs/architecture.md, "Settings"): with
``COMPACTION_ENABLED=false`` ``/compact`` answers 409 ``compaction_disabled`` and nothing is
queued while the history and the stats still answer; ``tokenBudget`` on an agent (``null``
back to ``COMPACTION_TOKEN_BUDGET``) is the threshold the context stats report."""

from __future__ import annotations

from typing import Any

import pytest

from compaction.service.queue import compaction_queue
from tests.gateway.api_helpers import imported, view
from tests.gateway.conftest import Gateway


@pytest.fixture
def gateway_settings() -> dict[str, Any]:
    return {"enabled": False, "token_budget": 80_000}


def test_compact_is_refused_and_the_rest_answers(gateway: Gateway) -> None:
    imported(gateway)
    before = view(gateway, "full")

    answer = gateway.client.post("/api/sessions/airline/compact", json={"focus": "flights"})

    assert answer.status_code == 409
    assert answer.json() == {
        "error": {
            "code": "compaction_disabled",
            "message": "compaction is switched off (COMPACTION_ENABLED=false)",
        }
    }
    producers = gateway.resources.producers
    assert len(compaction_queue(producers.redis, producers.settings.queue_name)) == 0
    assert view(gateway, "full") == before
    stats = gateway.client.get("/api/sessions/airline/context-stats")
    assert stats.status_code == 200 and stats.json()["thresholdTokens"] == 80_000


def test_an_agents_token_budget_set_then_cleared(gateway: Gateway) -> None:
    answer = gateway.client.put("/api/agents/coder", json={"tokenBudget": 30_000})
    assert answer.status_code == 200, answer.text
    shown = answer.json()
    assert shown["tokenBudget"] == 30_000
    assert shown["effective"]["tokenBudget"]["source"] == "agent"
    created = gateway.client.post("/api/sessions", json={"id": "s-coder", "agentId": "coder"})
    assert created.status_code in (200, 201), created.text
    stats = gateway.client.get("/api/sessions/s-coder/context-stats").json()
    assert (stats["thresholdTokens"], stats["thresholdPercent"]) == (30_000, 70)

    cleared = gateway.client.put("/api/agents/coder", json={"tokenBudget": None}).json()

    assert cleared["tokenBudget"] is None
    assert cleared["effective"]["tokenBudget"] == {
        "value": 80_000,
        "source": "system",
        "setting": "COMPACTION_TOKEN_BUDGET",
    }
    stats = gateway.client.get("/api/sessions/s-coder/context-stats").json()
    assert stats["thresholdTokens"] == 80_000
    refused = gateway.client.put("/api/agents/coder", json={"tokenBudget": 10})
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "invalid_request"
