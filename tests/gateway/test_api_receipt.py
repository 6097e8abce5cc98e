"""The receipt over HTTP (docs/architecture.md, "Receipt"): a channel's prices through
``POST/PATCH /api/channels``, and after a compaction ``GET /api/runs/{id}`` and the session's runs
answer the receipt's lists, the auxiliary tokens and the cost; ``context-stats`` the session's
total."""

from __future__ import annotations

import pytest

from tests.gateway.api_helpers import imported
from tests.gateway.conftest import Gateway
from tests.llm_server import FakeLLM


def test_run_answers_its_receipt_and_cost(gateway: Gateway, fake_llm: FakeLLM) -> None:
    channel = gateway.auxiliary(fake_llm)
    priced = gateway.client.patch(
        f"/api/channels/{channel.id}", json={"priceInput": 2.5, "priceOutput": 10}
    )
    assert priced.status_code == 200, priced.text
    assert (priced.json()["priceInput"], priced.json()["priceOutput"]) == (2.5, 10.0)
    imported(gateway)

    assert gateway.client.post("/api/sessions/airline/compact").status_code == 202
    gateway.drain()

    [run] = gateway.client.get("/api/sessions/airline/runs").json()["runs"]
    assert gateway.client.get(f"/api/runs/{run['id']}").json() == run
    receipt = run["receipt"]
    identifiers = receipt["identifiers"]
    assert identifiers["total"] == sum(identifiers["totals"].values()) > 0
    assert identifiers["kept"] == identifiers["total"] - sum(identifiers["missingCounts"].values())
    users = receipt["userMessages"]
    assert users["total"] >= 1 and users["verbatim"] + len(users["folded"]) == users["total"]
    assert run["inputTokens"] > 0 and run["outputTokens"] > 0
    expected = (run["inputTokens"] * 2.5 + run["outputTokens"] * 10) / 1e6
    assert run["cost"] == pytest.approx(expected)
    stats = gateway.client.get("/api/sessions/airline/context-stats").json()
    assert stats["compactionCost"] == pytest.approx(expected)
    assert stats["auxTokens"] == {"input": run["inputTokens"], "output": run["outputTokens"]}


def test_prices_are_checked_and_cleared(gateway: Gateway, fake_llm: FakeLLM) -> None:
    channel = gateway.auxiliary(fake_llm)
    path = f"/api/channels/{channel.id}"
    for bad in ({"priceInput": -1}, {"priceOutput": 1e9}, {"priceInput": "cheap"}):
        refused = gateway.client.patch(path, json=bad)
        assert refused.status_code in (400, 422), refused.text
        assert refused.json()["error"]["code"] == "invalid_request"
    assert gateway.client.patch(path, json={"priceInput": 1}).json()["priceOutput"] is None
    cleared = gateway.client.patch(path, json={"priceInput": None})
    assert cleared.status_code == 200, cleared.text
    assert (cleared.json()["priceInput"], cleared.json()["priceOutput"]) == (None, None)
    added = gateway.client.post(
        "/api/channels",
        json={"name": "priced", "provider": "openai", "model": "m", "priceOutput": 0.6},
    )
    assert added.status_code == 201, added.text
    assert (added.json()["priceInput"], added.json()["priceOutput"]) == (None, 0.6)
    listed = {c["name"]: c for c in gateway.client.get("/api/channels").json()["channels"]}
    assert listed["priced"]["priceOutput"] == 0.6


def test_an_unpriced_channel_gives_a_null_cost(gateway: Gateway, fake_llm: FakeLLM) -> None:
    gateway.auxiliary(fake_llm)
    imported(gateway)
    assert gateway.client.post("/api/sessions/airline/compact").status_code == 202
    gateway.drain()
    [run] = gateway.client.get("/api/sessions/airline/runs").json()["runs"]
    assert run["cost"] is None and run["receipt"] is not None and run["inputTokens"] > 0
    assert (
        gateway.client.get("/api/sessions/airline/context-stats").json()["compactionCost"] is None
    )
