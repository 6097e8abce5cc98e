"""``compaction channel add|list`` through ``cli.main`` (docs/architecture.md, "Logs and
metrics"): a channel's key is shown masked, and so are the credentials a base URL carries (a
password, a lone user name, query and fragment values), as text and as JSON."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

pytestmark = pytest.mark.integration

PASSWORD = "s3cret-" + "pw-42"
QUERY_KEY = "qk-" + "0123456789"
KEY = "sk-cli-" + "0123456789abcdef"
BASE_URL = f"https://proxy-user:{PASSWORD}@proxy.example/v1?api_key={QUERY_KEY}&region=eu"
SHOWN = "https://proxy-user:…@proxy.example/v1?api_key=…&region=…"


def test_channel_credentials_are_masked(command: Callable[..., tuple[int, str, str]]) -> None:
    options = ["--provider", "openai-compatible", "--model", "m", "--base-url", BASE_URL]
    options += ["--api-key", KEY, "--auxiliary", "--default"]
    outputs = [
        command("channel", "add", "proxied", *options),
        command("channel", "add", "again", *options, "--json"),
        command("channel", "list"),
        command("channel", "list", "--json"),
    ]

    assert [status for status, _, _ in outputs] == [0, 0, 0, 0]
    for _, out, err in outputs:
        for secret in (PASSWORD, QUERY_KEY, KEY):
            assert secret not in out + err, secret
    listed = json.loads(outputs[-1][1])
    assert [row["baseUrl"] for row in listed] == [SHOWN, SHOWN]
    assert [row["apiKey"] for row in listed] == ["sk-…cdef"] * 2
    assert json.loads(outputs[1][1])["baseUrl"] == SHOWN
