"""The guard through HTTP (docs/architecture.md, "The gateway"): a bearer token on every
``/api`` call, a cap on request bodies, CORS closed unless configured."""

from __future__ import annotations

from tests.gateway.conftest import Gateway


def test_the_token_is_needed_on_api_calls(gateway: Gateway) -> None:
    with gateway.anonymous() as anonymous:
        refused = anonymous.get("/api/sessions")
        wrong = anonymous.get("/api/sessions", headers={"Authorization": "Bearer nope"})
        health = anonymous.get("/healthz")
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "unauthorized"
    assert wrong.status_code == 401
    assert health.status_code == 200
