"""The gateway's settings (docs/architecture.md, "Settings"): ``COMPACTION_GATEWAY_TOKEN``
(secret; blank is no token), ``COMPACTION_GATEWAY_CORS_ORIGINS``, ``..._ALLOWED_ORIGINS`` and
``..._ALLOWED_HOSTS`` (a JSON list or a comma separated one) and the connection bounds, as
``compaction gateway`` reads them from the environment."""

from __future__ import annotations

import pytest

from compaction.core.errors import InvalidConfig
from compaction.service.settings import Settings

TOKEN = "gateway-token-0123456789abcdef"


@pytest.fixture(autouse=True)
def no_gateway_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COMPACTION_GATEWAY_TOKEN", raising=False)
    monkeypatch.delenv("COMPACTION_GATEWAY_CORS_ORIGINS", raising=False)
    for bound in ("ALLOWED_ORIGINS", "ALLOWED_HOSTS", "HEADER_TIMEOUT_S", "MAX_CONNECTIONS"):
        monkeypatch.delenv(f"COMPACTION_GATEWAY_{bound}", raising=False)


def read() -> Settings:
    return Settings(_env_file=None)


def test_the_token_is_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPACTION_GATEWAY_TOKEN", TOKEN)
    settings = read()
    assert settings.gateway_token is not None
    assert settings.gateway_token.get_secret_value() == TOKEN
    assert TOKEN not in repr(settings) and TOKEN not in str(settings.model_dump())


@pytest.mark.parametrize("blank", ["", "   "])
def test_a_blank_token_is_no_token(monkeypatch: pytest.MonkeyPatch, blank: str) -> None:
    monkeypatch.setenv("COMPACTION_GATEWAY_TOKEN", blank)
    assert read().gateway_token is None


@pytest.mark.parametrize(
    ("value", "origins"),
    [
        ("", []),
        ("https://a.example", ["https://a.example"]),
        (
            "https://a.example, http://b.example:8080 ,",
            ["https://a.example", "http://b.example:8080"],
        ),
        ('["https://a.example", "http://b.example"]', ["https://a.example", "http://b.example"]),
    ],
)
def test_cors_origins(monkeypatch: pytest.MonkeyPatch, value: str, origins: list[str]) -> None:
    monkeypatch.setenv("COMPACTION_GATEWAY_CORS_ORIGINS", value)
    assert read().gateway_cors_origins == origins


def test_cors_origins_that_are_broken_json_are_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPACTION_GATEWAY_CORS_ORIGINS", '["https://a.example"')
    with pytest.raises(InvalidConfig) as raised:
        read()
    assert raised.value.message.startswith("invalid settings: gateway_cors_origins:")
    assert "\n" not in raised.value.message


def test_allowed_origins_and_hosts_and_the_connection_bounds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert read().gateway_allowed_hosts == [] and read().gateway_allowed_origins == []
    assert read().gateway_header_timeout_s == 10 and read().gateway_max_connections == 1000
    monkeypatch.setenv("COMPACTION_GATEWAY_ALLOWED_ORIGINS", "https://a.example, https://b.example")
    monkeypatch.setenv("COMPACTION_GATEWAY_ALLOWED_HOSTS", '["gw.example", "gw.example:8443"]')
    monkeypatch.setenv("COMPACTION_GATEWAY_HEADER_TIMEOUT_S", "2.5")
    monkeypatch.setenv("COMPACTION_GATEWAY_MAX_CONNECTIONS", "50")
    settings = read()
    assert settings.gateway_allowed_origins == ["https://a.example", "https://b.example"]
    assert settings.gateway_allowed_hosts == ["gw.example", "gw.example:8443"]
    assert settings.gateway_header_timeout_s == 2.5 and settings.gateway_max_connections == 50
    monkeypatch.setenv("COMPACTION_GATEWAY_MAX_CONNECTIONS", "0")
    with pytest.raises(InvalidConfig):
        read()
