"""The gateway's settings (docs/architecture.md, "Settings"): ``COMPACTION_GATEWAY_TOKEN``
(secret; blank is no token) and ``COMPACTION_GATEWAY_CORS_ORIGINS`` (a JSON list or a comma
separated one), as ``compaction gateway`` reads them from the environment."""

from __future__ import annotations

import pytest

from compaction.core.errors import InvalidConfig
from compaction.service.settings import Settings

TOKEN = "gateway-token-0123456789abcdef"


@pytest.fixture(autouse=True)
def no_gateway_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COMPACTION_GATEWAY_TOKEN", raising=False)
    monkeypatch.delenv("COMPACTION_GATEWAY_CORS_ORIGINS", raising=False)


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
