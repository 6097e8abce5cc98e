"""``compaction channel add|edit`` keep a channel's key where it belongs (docs/security.md,
"Secrets"), as the HTTP API does (tests/gateway/test_api_channel_secrets.py): ``--api-key-env``
names only a variable matching ``COMPACTION_CHANNEL_KEY_ENV_PATTERN`` and never a
``COMPACTION_*`` one; a new ``--base-url`` or ``--provider`` needs the key given again (or
cleared); ``--base-url`` is http or https with a host."""

from __future__ import annotations

import json

import pytest

from tests.integration.test_cli_channels import Command, ok, refused

KEY = "sk-cli-" + "0123456789abcdef"
URL = "https://llm.example/v1"


def channels(command: Command) -> dict[str, dict[str, object]]:
    return {row["name"]: row for row in json.loads(ok(command, "channel", "list", "--json"))}


def add(command: Command, name: str, *options: str) -> list[str]:
    return ["channel", "add", name, "--provider", "openai-compatible", "--model", "m", *options]


@pytest.mark.parametrize(
    "variable",
    ["COMPACTION_DATABASE_URL", "COMPACTION_GATEWAY_TOKEN", "compaction_redis_url", "HOME"],
)
def test_api_key_env_outside_the_pattern_is_refused(command: Command, variable: str) -> None:
    err = refused(command, *add(command, "stolen", "--api-key-env", variable))
    assert "apiKeyEnv" in err and "*_API_KEY" in err and variable not in err
    ok(command, *add(command, "ok", "--api-key-env", "OPENAI_API_KEY"))
    assert "apiKeyEnv" in refused(command, "channel", "edit", "ok", "--api-key-env", variable)
    assert set(channels(command)) == {"ok"}
    assert channels(command)["ok"]["apiKeyEnv"] == "OPENAI_API_KEY"


def test_the_pattern_setting_decides_but_never_opens_compaction_variables(
    command: Command, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMPACTION_CHANNEL_KEY_ENV_PATTERN", "ACME_*")
    ok(command, *add(command, "acme", "--api-key-env", "ACME_TOKEN"))
    refused(command, *add(command, "openai", "--api-key-env", "OPENAI_API_KEY"))
    monkeypatch.setenv("COMPACTION_CHANNEL_KEY_ENV_PATTERN", "*")
    refused(command, *add(command, "own", "--api-key-env", "COMPACTION_DATABASE_URL"))
    assert set(channels(command)) == {"acme"}


@pytest.mark.parametrize(
    "move", [["--base-url", "https://attacker.example/v1"], ["--provider", "openai"]]
)
@pytest.mark.parametrize("key", [["--api-key", KEY], ["--api-key-env", "AUX_API_KEY"]])
def test_a_new_destination_needs_the_key_again(
    command: Command, move: list[str], key: list[str]
) -> None:
    ok(command, *add(command, "aux", "--base-url", URL, *key))
    before = channels(command)["aux"]

    err = refused(command, "channel", "edit", "aux", *move)

    assert "--api-key" in err and KEY not in err
    assert channels(command)["aux"] == before
    ok(command, "channel", "edit", "aux", *move, "--api-key", "sk-other-0123456789")
    ok(command, "channel", "edit", "aux", "--clear-base-url", "--clear-api-key")
    assert channels(command)["aux"]["baseUrl"] is None
    assert channels(command)["aux"]["apiKey"] is None


@pytest.mark.parametrize("url", ["javascript:alert(1)", "file:///etc/passwd", "http://", "x.y"])
def test_a_base_url_is_http_or_https_with_a_host(command: Command, url: str) -> None:
    assert "baseUrl" in refused(command, *add(command, "bad", "--base-url", url))
    ok(command, *add(command, "good", "--base-url", URL))
    assert "baseUrl" in refused(command, "channel", "edit", "good", "--base-url", url)
    assert set(channels(command)) == {"good"}
    assert channels(command)["good"]["baseUrl"] == URL
