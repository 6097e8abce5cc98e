"""A channel's key goes only where it belongs (docs/security.md, "Secrets"; the red team's
findings of step 13), over HTTP and on the worker's and the chat's paths:

- ``apiKeyEnv`` names only a variable matching ``COMPACTION_CHANNEL_KEY_ENV_PATTERN`` (default
  ``*_API_KEY``), never a ``COMPACTION_*`` one: refused where it is set (400), and not read
  where it is used (a channel stored before the rule, or edited in the database);
- a new destination (``baseUrl`` or ``provider``) needs its key given again: the stored key is
  never sent to it;
- ``baseUrl`` is an http or https URL with a host.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from tests.gateway.api_helpers import imported, view
from tests.gateway.conftest import Gateway
from tests.llm_server import FakeLLM, serve

KEY = "sk-test-" + "channel-0123456789abcdef"


def refused(answer: httpx.Response, field: str) -> str:
    """The 400 ``invalid_request`` of a refused request, naming ``field``; its message."""
    assert answer.status_code == 400, answer.text
    error: dict[str, str] = answer.json()["error"]
    assert error["code"] == "invalid_request"
    assert field in error["message"]
    return error["message"]


def add(gateway: Gateway, name: str, **fields: Any) -> httpx.Response:
    body = {"name": name, "provider": "openai-compatible", "model": "m", **fields}
    return gateway.client.post("/api/channels", json=body)


def listed(gateway: Gateway) -> dict[str, dict[str, Any]]:
    rows = gateway.client.get("/api/channels").json()["channels"]
    return {row["name"]: row for row in rows}


def authorization(headers: dict[str, str]) -> str:
    return {name.lower(): value for name, value in headers.items()}.get("authorization", "")


@pytest.fixture
def attacker() -> Iterator[FakeLLM]:
    """A second model server: the address a red team points a channel at."""
    with serve() as fake:
        yield fake


# --- apiKeyEnv: which variables a channel may read --------------------------------------------

FORBIDDEN_VARIABLES = [
    "COMPACTION_DATABASE_URL",
    "COMPACTION_GATEWAY_TOKEN",
    "compaction_database_url",  # settings are read whatever the case
    "COMPACTION_AUXILIARY_API_KEY",  # matches the pattern, but the service's own
    "DATABASE_URL",
    "AWS_SECRET_ACCESS_KEY",
    "OPENAI_API_KEY=sk-x",
]


@pytest.mark.parametrize("variable", FORBIDDEN_VARIABLES)
def test_a_channel_may_not_name_a_variable_outside_the_pattern(
    gateway: Gateway, variable: str
) -> None:
    refused(add(gateway, "stolen", apiKeyEnv=variable), "apiKeyEnv")
    assert listed(gateway) == {}

    assert add(gateway, "ok", apiKeyEnv="OPENAI_API_KEY").status_code == 201
    edit = gateway.client.patch("/api/channels/ok", json={"apiKeyEnv": variable})
    message = refused(edit, "apiKeyEnv")
    assert "*_API_KEY" in message and variable not in message  # never echoed: maybe a key
    assert listed(gateway)["ok"]["apiKeyEnv"] == "OPENAI_API_KEY"


@pytest.mark.parametrize("gateway_settings", [{"channel_key_env_pattern": "ACME_*"}])
def test_the_pattern_is_a_setting_and_never_opens_the_services_own(gateway: Gateway) -> None:
    assert add(gateway, "acme", apiKeyEnv="ACME_LLM_TOKEN").status_code == 201
    refused(add(gateway, "openai", apiKeyEnv="OPENAI_API_KEY"), "apiKeyEnv")
    assert set(listed(gateway)) == {"acme"}


@pytest.mark.parametrize("gateway_settings", [{"channel_key_env_pattern": "*"}])
def test_even_a_pattern_matching_everything_never_reads_a_compaction_variable(
    gateway: Gateway,
) -> None:
    assert add(gateway, "any", apiKeyEnv="DATABASE_URL").status_code == 201
    refused(add(gateway, "own", apiKeyEnv="COMPACTION_DATABASE_URL"), "apiKeyEnv")


def forbid_variable(gateway: Gateway, channel: str, variable: str) -> None:
    """What a channel stored before the rule, or edited in the database, holds."""
    with gateway.store.factory() as session, session.begin():
        session.execute(
            text("UPDATE model_channel SET api_key = NULL, api_key_env = :v WHERE name = :n"),
            {"v": variable, "n": channel},
        )


@pytest.mark.parametrize("variable", ["COMPACTION_REDTEAM_SECRET", "REDTEAM_DB_PASSWORD"])
def test_a_stored_channel_naming_a_forbidden_variable_is_never_read_by_the_worker(
    gateway: Gateway, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    secret = "redteam-" + secrets.token_hex(16)
    monkeypatch.setenv(variable, secret)
    gateway.auxiliary(fake_llm, name="aux")
    forbid_variable(gateway, "aux", variable)
    imported(gateway)
    before = view(gateway, "compacted")

    assert gateway.client.post("/api/sessions/airline/compact").status_code == 202
    gateway.drain()

    assert fake_llm.requests == []  # nothing sent: no key, no secret
    [run] = gateway.client.get("/api/sessions/airline/runs").json()["runs"]
    assert (run["status"], run["code"]) == ("failed", "no_auxiliary_model")
    assert "COMPACTION_CHANNEL_KEY_ENV_PATTERN" in run["error"] and secret not in run["error"]
    assert view(gateway, "compacted") == before


def test_a_stored_chat_channel_naming_a_forbidden_variable_is_never_read(
    gateway: Gateway, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "redteam-" + secrets.token_hex(16)
    monkeypatch.setenv("COMPACTION_REDTEAM_SECRET", secret)
    answer = add(gateway, "chat", model="chat-1", baseUrl=fake_llm.url_for("openai"), apiKey=KEY)
    assert answer.status_code == 201, answer.text
    forbid_variable(gateway, "chat", "COMPACTION_REDTEAM_SECRET")
    session_id = gateway.store.create_session("s1", model="chat-1")

    said = gateway.client.post(f"/api/sessions/{session_id}/messages", json={"content": "hi"})

    assert said.status_code >= 400 and said.json()["error"]["code"] == "no_chat_model"
    assert secret not in said.text
    assert fake_llm.requests == []


# --- a new destination needs its key again ----------------------------------------------------


@pytest.mark.parametrize(
    "change",
    [{"baseUrl": "ATTACKER"}, {"provider": "openai"}, {"baseUrl": None}],
    ids=["baseUrl", "provider", "baseUrl-cleared"],
)
@pytest.mark.parametrize("key", [{"apiKey": KEY}, {"apiKeyEnv": "REDTEAM_API_KEY"}])
def test_a_new_destination_never_gets_the_stored_key(
    gateway: Gateway,
    fake_llm: FakeLLM,
    attacker: FakeLLM,
    monkeypatch: pytest.MonkeyPatch,
    change: dict[str, Any],
    key: dict[str, str],
) -> None:
    monkeypatch.setenv("REDTEAM_API_KEY", KEY)
    body = {"baseUrl": fake_llm.url_for("openai"), "auxiliary": True, "default": True, **key}
    assert add(gateway, "aux", **body).status_code == 201
    stored = listed(gateway)["aux"]
    change = {k: attacker.url_for("openai") if v == "ATTACKER" else v for k, v in change.items()}

    message = refused(gateway.client.patch("/api/channels/aux", json=change), "apiKey")
    assert KEY not in message
    assert listed(gateway)["aux"] == stored

    imported(gateway)
    assert gateway.client.post("/api/sessions/airline/compact").status_code == 202
    gateway.drain()
    assert attacker.requests == []
    assert [KEY in authorization(r.headers) for r in fake_llm.requests] == [True]


def test_a_new_destination_with_its_key_or_without_one_is_taken(
    gateway: Gateway, attacker: FakeLLM
) -> None:
    assert add(gateway, "keyed", apiKey=KEY).status_code == 201
    assert add(gateway, "keyless").status_code == 201
    url = attacker.url_for("openai")

    with_key = gateway.client.patch("/api/channels/keyed", json={"baseUrl": url, "apiKey": "k2"})
    by_variable = gateway.client.patch(
        "/api/channels/keyed", json={"provider": "openai", "apiKeyEnv": "OTHER_API_KEY"}
    )
    cleared = gateway.client.patch("/api/channels/keyed", json={"baseUrl": None, "apiKeyEnv": None})
    keyless = gateway.client.patch("/api/channels/keyless", json={"baseUrl": url})
    same = gateway.client.patch("/api/channels/keyless", json={"apiKey": KEY, "model": "m2"})

    answers = [with_key, by_variable, cleared, keyless, same]
    assert [a.status_code for a in answers] == [200] * 5, [a.text for a in answers]
    assert (by_variable.json()["provider"], by_variable.json()["apiKeyEnv"]) == (
        "openai",
        "OTHER_API_KEY",
    )
    assert cleared.json()["baseUrl"] is None and cleared.json()["apiKeyEnv"] is None
    assert keyless.json()["baseUrl"] == url and same.json()["apiKey"] is not None


# --- baseUrl: http or https, with a host ------------------------------------------------------

BAD_URLS = [
    "javascript:alert(document.cookie)",
    "file:///etc/passwd",
    "ftp://llm.example/v1",
    "http://",
    "https:///v1",
    "llm.example/v1",
    "",
    "https://llm.example:99999/v1",
    "https://[::1/v1",
    "https://llm.example/v1\nX-Injected: 1",
]


@pytest.mark.parametrize("url", BAD_URLS)
def test_a_base_url_is_http_or_https_with_a_host(gateway: Gateway, url: str) -> None:
    refused(add(gateway, "bad", baseUrl=url), "baseUrl")
    assert add(gateway, "good", baseUrl="HTTPS://llm.example/v1").status_code == 201
    refused(gateway.client.patch("/api/channels/good", json={"baseUrl": url}), "baseUrl")
    assert listed(gateway)["good"]["baseUrl"] == "https://llm.example/v1"  # shown normalized
