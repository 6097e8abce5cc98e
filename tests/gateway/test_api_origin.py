"""Other web pages cannot drive the gateway (docs/architecture.md, "The gateway"; the red team's
step 13): a socket handshake (WebSocket, SSE) or any request but GET/HEAD from a foreign
``Origin`` is refused, ``Origin: null`` too; without a token only the loopback names pass as
``Host`` (DNS rebinding); with one, ``COMPACTION_GATEWAY_ALLOWED_ORIGINS`` / ``..._HOSTS`` and the
CORS origins extend the lists. Every answer forbids framing and sniffing."""

from __future__ import annotations

import base64
import dataclasses
import os
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest
from pydantic import SecretStr
from websockets.sync.client import connect
from websockets.typing import Origin

from compaction.gateway.resources import GatewayOptions
from tests.gateway.conftest import Gateway, serve

FOREIGN = "http://evil.test"
CONSOLE = "http://console.test"
EXTRA = "https://app.test"


@pytest.fixture
def gateway_options() -> GatewayOptions:
    return GatewayOptions(token=None)  # the default mode: `compaction gateway` with no token


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def refused(answer: httpx.Response, code: str) -> None:
    assert answer.status_code == 403, answer.text
    assert answer.json()["error"]["code"] == code


def upgrade(client: httpx.Client, path: str, **headers: str) -> httpx.Response:
    """A WebSocket handshake as a browser sends it, for the answers that refuse it."""
    key = base64.b64encode(os.urandom(16)).decode()
    handshake = {
        "Connection": "Upgrade",
        "Upgrade": "websocket",
        "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": key,
    }
    return client.get(path, headers={**handshake, **headers})


@contextmanager
def opened(gateway: Gateway, path: str, origin: str | None) -> Iterator[None]:
    url = f"{gateway.ws_url}{path}"
    with connect(url, origin=Origin(origin) if origin else None, open_timeout=20):
        yield


def own_origins(url: str) -> list[str]:
    port = port_of(url)
    return [f"http://127.0.0.1:{port}", f"http://localhost:{port}", f"http://[::1]:{port}"]


def foreign_origins(url: str) -> list[str]:
    port = port_of(url)
    return [
        FOREIGN,
        "null",  # a sandboxed frame, a file: page, a redirect across origins
        f"http://127.0.0.1:{port + 1}",  # another server on this machine
        f"http://localhost.evil.test:{port}",
        f"http://127.0.0.1.evil.test:{port}",
    ]


def test_state_changing_requests_from_foreign_origins_are_refused(gateway: Gateway) -> None:
    session_id = gateway.store.create_session()
    for origin in foreign_origins(gateway.url):
        for method, path in (
            ("POST", f"/api/sessions/{session_id}/compact"),
            ("POST", "/api/runs/1/restore"),
            ("POST", "/api/sessions"),
            ("PUT", "/api/agents/a"),
            ("DELETE", "/api/channels/1"),
            ("OPTIONS", "/api/sessions"),  # a preflight nobody allowed
        ):
            answer = gateway.client.request(method, path, headers={"Origin": origin})
            refused(answer, "forbidden_origin")
    assert gateway.client.get(f"/api/sessions/{session_id}/runs").json()["runs"] == []
    assert len(gateway.client.get("/api/sessions").json()["sessions"]) == 1


def test_the_gateways_own_origins_and_no_origin_are_accepted(gateway: Gateway) -> None:
    for number, origin in enumerate([*own_origins(gateway.url), None]):
        headers = {"Origin": origin} if origin else {}
        answer = gateway.client.post("/api/sessions", json={"id": f"s{number}"}, headers=headers)
        assert answer.status_code == 201, (origin, answer.text)
    assert gateway.client.get("/api/sessions/s3").status_code == 200


def test_without_a_token_only_loopback_hosts_are_served(gateway: Gateway) -> None:
    """DNS rebinding: a page of evil.test, its name now resolving to 127.0.0.1, is same-origin
    with the gateway in the browser's eyes; only its Host header tells."""
    port = port_of(gateway.url)
    session_id = gateway.store.create_session()
    with gateway.anonymous() as anonymous:
        for host in (f"evil.test:{port}", "evil.test", f"127.0.0.1.evil.test:{port}"):
            for path in ("/api/sessions", "/", "/app.js", "/healthz", "/docs"):
                refused(anonymous.get(path, headers={"Host": host}), "forbidden_host")
            events = anonymous.get(f"/api/sessions/{session_id}/events", headers={"Host": host})
            refused(events, "forbidden_host")
            socket = upgrade(anonymous, f"/ws/sessions/{session_id}", Host=host)
            refused(socket, "forbidden_host")
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", "LOCALHOST"):
            answer = anonymous.get("/api/sessions", headers={"Host": host})
            assert answer.status_code == 200, (host, answer.text)


def test_socket_handshakes_from_foreign_origins_are_refused(gateway: Gateway) -> None:
    session_id = gateway.store.create_session()
    events = f"/api/sessions/{session_id}/events"
    with gateway.anonymous() as anonymous:
        for origin in foreign_origins(gateway.url):
            refused(
                upgrade(anonymous, f"/ws/sessions/{session_id}", Origin=origin), "forbidden_origin"
            )
            refused(anonymous.get(events, headers={"Origin": origin}), "forbidden_origin")
        for own in [*own_origins(gateway.url), None]:
            headers = {"Origin": own} if own else {}
            with anonymous.stream("GET", events, headers=headers) as stream:
                assert stream.status_code == 200, own
            with opened(gateway, f"/ws/sessions/{session_id}", own):
                pass


def test_plain_reads_need_no_origin_check(gateway: Gateway) -> None:
    """A cross-origin GET is unreadable without CORS; refusing it would only break clients."""
    answer = gateway.client.get("/api/sessions", headers={"Origin": FOREIGN})
    assert answer.status_code == 200
    assert "access-control-allow-origin" not in answer.headers


def test_every_answer_forbids_framing_and_sniffing(gateway: Gateway) -> None:
    with gateway.anonymous() as anonymous:
        answers = [
            anonymous.get("/"),
            anonymous.get("/app.js"),
            anonymous.get("/healthz"),
            anonymous.get("/api/sessions"),
            anonymous.get("/api/nothing-here"),
            anonymous.post("/api/sessions", headers={"Origin": FOREIGN}),
            anonymous.get("/", headers={"Host": "evil.test"}),
            anonymous.get("/docs"),
        ]
    for answer in answers:
        policy = answer.headers.get("content-security-policy", "")
        assert "frame-ancestors 'none'" in policy, answer.url
        assert "object-src 'none'" in policy and "base-uri 'none'" in policy
        assert answer.headers["x-frame-options"] == "DENY"
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["referrer-policy"] == "no-referrer"
    console = answers[0].headers["content-security-policy"]
    assert "default-src 'self'" in console and "unsafe-inline" not in console


def test_with_a_token_the_configured_origins_and_same_origin_pass(gateway: Gateway) -> None:
    options = GatewayOptions(
        token=SecretStr(gateway.token), cors_origins=(CONSOLE,), allowed_origins=(EXTRA,)
    )
    with_token = dataclasses.replace(gateway.resources, options=options)
    with serve(with_token) as url, gateway.anonymous(url) as anonymous:
        bearer = {"Authorization": f"Bearer {gateway.token}"}
        port = port_of(url)
        for number, origin in enumerate((CONSOLE, EXTRA, url, f"http://localhost:{port}")):
            answer = anonymous.post(
                "/api/sessions", json={"id": f"t{number}"}, headers={**bearer, "Origin": origin}
            )
            assert answer.status_code == 201, (origin, answer.text)
        # the token does not make a foreign page's request its owner's
        for origin in (FOREIGN, "null", f"http://127.0.0.1:{port + 1}"):
            answer = anonymous.post("/api/sessions", headers={**bearer, "Origin": origin})
            refused(answer, "forbidden_origin")
        # any Host by default (a load balancer's name), and the same origin as that Host
        public = {"Host": "gateway.example.com", "Origin": "https://gateway.example.com"}
        answer = anonymous.post("/api/sessions", json={"id": "lb"}, headers={**bearer, **public})
        assert answer.status_code == 201, answer.text


def test_allowed_hosts_restrict_the_host_header(gateway: Gateway) -> None:
    options = GatewayOptions(token=SecretStr(gateway.token), allowed_hosts=("gateway.example.com",))
    restricted = dataclasses.replace(gateway.resources, options=options)
    with serve(restricted) as url, gateway.anonymous(url) as anonymous:
        bearer = {"Authorization": f"Bearer {gateway.token}"}
        for host in ("gateway.example.com", "GATEWAY.example.com:443", f"127.0.0.1:{port_of(url)}"):
            answer = anonymous.get("/api/sessions", headers={**bearer, "Host": host})
            assert answer.status_code == 200, host
        refused(
            anonymous.get("/api/sessions", headers={**bearer, "Host": "evil.test"}),
            "forbidden_host",
        )
        refused(anonymous.get("/", headers={"Host": "other.example.com"}), "forbidden_host")


def test_no_token_with_allowed_hosts_and_origins_extends_the_loopback(gateway: Gateway) -> None:
    options = GatewayOptions(
        token=None, allowed_hosts=("compaction.internal",), allowed_origins=(EXTRA,)
    )
    extended = dataclasses.replace(gateway.resources, options=options)
    with serve(extended) as url, gateway.anonymous(url) as anonymous:
        assert (
            anonymous.get("/api/sessions", headers={"Host": "compaction.internal"}).status_code
            == 200
        )
        assert anonymous.get("/api/sessions").status_code == 200
        refused(anonymous.get("/api/sessions", headers={"Host": "evil.test"}), "forbidden_host")
        answer = anonymous.post("/api/sessions", json={"id": "x"}, headers={"Origin": EXTRA})
        assert answer.status_code == 201, answer.text
        refused(anonymous.post("/api/sessions", headers={"Origin": FOREIGN}), "forbidden_origin")
