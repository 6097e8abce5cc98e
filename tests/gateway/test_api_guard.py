"""The guard through HTTP (docs/architecture.md, "The gateway"): a bearer token on every
``/api`` call, a cap on request bodies (413 before the handler reads them), CORS closed unless
configured and then answering the configured origin's preflight without a token."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest
from pydantic import SecretStr

from compaction.gateway.resources import GatewayOptions
from tests.gateway.conftest import Gateway, serve

CONSOLE = "http://console.test"
FOREIGN = "http://evil.test"
CAP = 65_536


@pytest.fixture
def gateway_options() -> GatewayOptions:
    return GatewayOptions(token=SecretStr("x"), cors_origins=(CONSOLE,), max_body_bytes=CAP)


def transcript_of(size: int) -> bytes:
    return b'[{"role": "user", "content": "' + b"a" * size + b'"}]'


def test_the_token_is_needed_on_api_calls(gateway: Gateway) -> None:
    with gateway.anonymous() as anonymous:
        missing = anonymous.get("/api/sessions")
        wrong = anonymous.get("/api/sessions", headers={"Authorization": "Bearer nope"})
        basic = anonymous.get("/api/sessions", headers={"Authorization": f"Basic {gateway.token}"})
        query = anonymous.get("/api/sessions", params={"token": gateway.token})
        health = anonymous.get("/healthz")
        console = anonymous.get("/")
    for refused in (missing, wrong, basic, query):  # ?token= is for sockets only
        assert refused.status_code == 401
        assert refused.json() == {
            "error": {"code": "unauthorized", "message": "a bearer token is required"}
        }
    assert gateway.client.get("/api/sessions").status_code == 200
    assert health.status_code == 200
    assert console.status_code == 200  # the console asks for the token itself


def test_a_body_over_the_cap_is_413_declared_or_streamed(gateway: Gateway) -> None:
    path = "/api/sessions/big/import"
    declared = gateway.client.post(
        path, content=transcript_of(CAP), headers={"Content-Type": "application/json"}
    )

    def chunks() -> Iterator[bytes]:  # no Content-Length: the cap counts what arrives
        body = transcript_of(CAP)
        for start in range(0, len(body), 8192):
            yield body[start : start + 8192]

    streamed = gateway.client.post(
        path, content=chunks(), headers={"Content-Type": "application/json"}
    )
    for answer in (declared, streamed):
        assert answer.status_code == 413, answer.text
        assert answer.json()["error"]["code"] == "too_large"
    assert gateway.client.get("/api/sessions/big").status_code == 404  # nothing stored
    under = gateway.client.post(
        path, content=transcript_of(CAP // 2), headers={"Content-Type": "application/json"}
    )
    assert under.status_code == 200, under.text


def test_cors_answers_the_configured_origin_only(gateway: Gateway) -> None:
    allowed = gateway.client.get("/api/sessions", headers={"Origin": CONSOLE})
    foreign = gateway.client.get("/api/sessions", headers={"Origin": FOREIGN})
    assert allowed.headers["access-control-allow-origin"] == CONSOLE
    assert "access-control-allow-origin" not in foreign.headers
    preflight = {"Access-Control-Request-Method": "POST"}
    with gateway.anonymous() as anonymous:  # a preflight never carries the token
        ok = anonymous.options(
            "/api/sessions",
            headers={
                **preflight,
                "Origin": CONSOLE,
                "Access-Control-Request-Headers": "authorization, content-type",
            },
        )
        refused = anonymous.options("/api/sessions", headers={**preflight, "Origin": FOREIGN})
        unauthorized = anonymous.get("/api/sessions", headers={"Origin": CONSOLE})
    assert ok.status_code == 200
    assert ok.headers["access-control-allow-origin"] == CONSOLE
    assert "authorization" in ok.headers["access-control-allow-headers"].lower()
    assert "access-control-allow-origin" not in refused.headers
    # the console's origin may read the guard's refusal, to ask for the token
    assert unauthorized.status_code == 401
    assert unauthorized.headers["access-control-allow-origin"] == CONSOLE


def test_cors_is_closed_by_default(gateway: Gateway) -> None:
    closed = dataclasses.replace(
        gateway.resources, options=GatewayOptions(token=SecretStr(gateway.token))
    )
    with serve(closed) as url, gateway.anonymous(url) as anonymous:
        headers = {"Origin": CONSOLE, "Authorization": f"Bearer {gateway.token}"}
        answer = anonymous.get("/api/sessions", headers=headers)
        preflight = anonymous.options(
            "/api/sessions", headers={"Origin": CONSOLE, "Access-Control-Request-Method": "GET"}
        )
    assert answer.status_code == 200
    assert "access-control-allow-origin" not in answer.headers
    assert "access-control-allow-origin" not in preflight.headers


def test_without_a_token_the_api_is_open(gateway: Gateway) -> None:
    """The gateway then listens on 127.0.0.1 only (``compaction gateway`` sees to it)."""
    open_ = dataclasses.replace(gateway.resources, options=GatewayOptions(token=None))
    with serve(open_) as url, gateway.anonymous(url) as anonymous:
        assert anonymous.get("/api/sessions").status_code == 200
