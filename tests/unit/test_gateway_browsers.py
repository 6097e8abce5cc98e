"""``gateway.browsers``' rules on their own (the HTTP tests are tests/gateway/test_api_origin.py):
how a ``Host`` and an ``Origin`` are read, which names are loopback, what an allowed entry
matches."""

from __future__ import annotations

import pytest

from compaction.gateway.browsers import authority, host_allowed, is_loopback, origin_allowed


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("127.0.0.1:8000", ("127.0.0.1", "8000")),
        ("LocalHost", ("localhost", "")),
        ("[::1]:8000", ("::1", "8000")),
        ("[::1]", ("::1", "")),
        ("[::1", None),
        ("[::1]8000", None),
        ("host:", ("host", "")),
        ("host:99999", None),
        ("host:8o", None),
        (":8000", None),
    ],
)
def test_authority(text: str, found: tuple[str, str] | None) -> None:
    assert authority(text) == found


@pytest.mark.parametrize(
    ("name", "loopback"),
    [
        ("localhost", True),
        ("127.0.0.2", True),
        ("::1", True),
        ("localhost.evil.test", False),
        ("127.0.0.1.nip.io", False),
        ("10.0.0.1", False),
        ("0.0.0.0", False),
    ],
)
def test_is_loopback(name: str, loopback: bool) -> None:
    assert is_loopback(name) is loopback


def test_hosts() -> None:
    allowed = ("gw.example", "other.example:8443")
    assert host_allowed("gw.example:1234", allowed)
    assert host_allowed("other.example:8443", allowed)
    assert not host_allowed("other.example:8444", allowed)
    assert not host_allowed("evil.test", allowed)
    assert not host_allowed(None, allowed)


@pytest.mark.parametrize(
    ("origin", "host", "allowed"),
    [
        ("http://127.0.0.1:8000", "127.0.0.1:8000", True),
        ("http://localhost:8000", "127.0.0.1:8000", True),
        ("http://[::1]:8000", "localhost:8000", True),
        ("http://127.0.0.2:8000", "127.0.0.1:8000", False),  # another address, maybe a server
        ("http://localhost:8001", "localhost:8000", False),
        ("https://gw.example", "gw.example", True),  # TLS ended by a proxy that keeps Host
        ("http://gw.example", "evil.test", False),
        ("http://evil.test", "localhost:8000", False),
        ("null", "localhost:8000", False),
        ("file://", "localhost:8000", False),
        ("https://app.test/", "localhost:8000", True),  # listed (a trailing slash is ignored)
        ("HTTPS://APP.TEST", "localhost:8000", True),
    ],
)
def test_origins(origin: str, host: str, allowed: bool) -> None:
    assert origin_allowed(origin, host, ("https://app.test", "null")) is allowed
