"""What the gateway checks of, and tells, the browsers that reach it (docs/architecture.md,
"The gateway"): which ``Host`` names it answers, which page origins may open its sockets or send
it anything but a plain read, and the headers every answer carries.

Without a token, loopback is not a boundary a browser respects: any page the user opens can
send requests to ``127.0.0.1``, and a DNS name rebound to ``127.0.0.1`` makes a foreign page
same-origin with the gateway. The ``Host`` header tells the second (only loopback names pass),
the ``Origin`` header the first.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

#: the names a browser on this machine reaches a loopback gateway by
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})

#: every answer but the API documentation's: the console loads only its own files, no inline
#: script or style, no plugin, and no page may frame it (clickjacking)
CONSOLE_POLICY = (
    "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
#: ``/docs`` and ``/redoc``: FastAPI's pages load Swagger UI / ReDoc from a CDN and start them
#: with an inline script; they hold no data of their own, and still cannot be framed
DOCS_POLICY = (
    "default-src 'self'; script-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net; "
    "style-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net https://fonts.googleapis.com; "
    "font-src https://fonts.gstatic.com; img-src 'self' data: https:; worker-src blob:; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)
DOCS_PATHS = ("/docs", "/redoc")


def security_headers(path: str) -> list[tuple[bytes, bytes]]:
    policy = DOCS_POLICY if path.startswith(DOCS_PATHS) else CONSOLE_POLICY
    return [
        (b"content-security-policy", policy.encode()),
        (b"x-frame-options", b"DENY"),  # frame-ancestors for browsers without CSP 2
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", b"no-referrer"),  # a socket URL may carry ?token=
    ]


Authority = tuple[str, str]
"""A ``Host`` or an origin's ``host[:port]``: the lower-case name (an IPv6 address without its
brackets) and the port as written (``""`` when absent)."""


def authority(text: str) -> Authority | None:
    """``name[:port]`` split, or ``None`` when it is not one."""
    text = text.strip().lower()
    if text.startswith("["):
        name, bracket, port = text[1:].partition("]")
        if not bracket or (port and not port.startswith(":")):
            return None
        port = port[1:]
    else:
        name, _, port = text.partition(":")
    if not name or (port and not (port.isdigit() and 0 < int(port) < 65536)):
        return None
    return name, port


def is_loopback(name: str) -> bool:
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:  # a DNS name: it may resolve to 127.0.0.1 today and elsewhere tomorrow
        return False


def host_allowed(host: str | None, allowed: Iterable[str]) -> bool:
    """A loopback name, or one of ``allowed`` (``name`` any port, ``name:port`` that one)."""
    found = authority(host) if host is not None else None
    if found is None:
        return False
    name, port = found
    if is_loopback(name):
        return True
    for entry in allowed:
        wanted = authority(entry)
        if wanted is not None and wanted[0] == name and wanted[1] in ("", port):
            return True
    return False


def origin_allowed(origin: str, host: str | None, allowed: Iterable[str]) -> bool:
    """The gateway's own origin (the page's authority is the ``Host`` it reached, or, on a
    loopback ``Host``, another loopback name at that port), or one of ``allowed`` exactly.
    ``null`` (sandboxed frames, ``file:`` pages, cross-origin redirects) is nobody's."""
    origin = origin.strip().lower().rstrip("/")
    if origin in {entry.strip().lower().rstrip("/") for entry in allowed} - {"null"}:
        return True
    scheme, separator, rest = origin.partition("://")
    page = authority(rest) if separator and scheme in ("http", "https") else None
    target = authority(host) if host is not None else None
    if page is None or target is None or page[1] != target[1]:
        return False
    return page[0] == target[0] or (is_loopback(target[0]) and page[0] in LOOPBACK_NAMES)
