"""How a channel's base URL is shown and what in it is a credential (store/records.py,
``mask_url`` and ``url_secrets``; docs/architecture.md, "Logs and metrics")."""

from __future__ import annotations

import pytest

from compaction.store.records import mask_url, url_secrets


@pytest.mark.parametrize(
    ("url", "shown", "secrets"),
    [
        ("https://api.openai.com/v1", "https://api.openai.com/v1", []),
        ("https://user:s3cret@proxy.example/v1", "https://user:…@proxy.example/v1", ["s3cret"]),
        ("https://tok3n-as-user@host:8443/v1", "https://…@host:8443/v1", ["tok3n-as-user"]),
        (
            "https://h/v1?api_key=abc123&region=eu&flag",
            "https://h/v1?api_key=…&region=…&flag",
            ["abc123", "eu"],
        ),
        ("http://h/cb#access_token=xyz789&x=1", "http://h/cb#access_token=…&x=…", ["xyz789", "1"]),
        ("http://a:b@c@h/v1", "http://a:…@h/v1", ["b@c"]),
        ("http://[::1", "…", []),  # no URL: nothing of it shown
    ],
)
def test_credentials_in_a_base_url(url: str, shown: str, secrets: list[str]) -> None:
    assert mask_url(url) == shown
    assert url_secrets(url) == secrets
