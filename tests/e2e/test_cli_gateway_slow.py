"""Slowloris against ``compaction gateway`` as a user runs it (docs/operations.md, "The gateway
in production"): a request's headers must arrive within ``COMPACTION_GATEWAY_HEADER_TIMEOUT_S``
of its first byte, however steadily they trickle, and past ``COMPACTION_GATEWAY_MAX_CONNECTIONS``
open connections a request is answered 503 at once instead of piling up."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx

from tests.e2e.test_cli_gateway import gateway, new_user

#: how long the test lets the slow sockets trickle: well past the timeout it sets
TRICKLE_S = 12.0


def address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").split(":")
    return host, int(port)


@contextmanager
def slow_sockets(url: str, count: int) -> Iterator[list[socket.socket]]:
    """``count`` connections that each sent a request line and one header, and no more."""
    with ExitStack() as stack:
        opened = []
        for _ in range(count):
            sock = stack.enter_context(socket.create_connection(address(url), timeout=10))
            sock.sendall(b"GET /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            opened.append(sock)
        yield opened


def closed_by_server(sock: socket.socket) -> bool:
    """One more header line, as slowloris sends every few seconds; False while it is taken."""
    try:
        sock.sendall(b"X-Slow: 1\r\n")
        sock.setblocking(False)
        try:
            return sock.recv(4096) == b""
        except BlockingIOError:
            return False
        finally:
            sock.setblocking(True)
    except (BrokenPipeError, ConnectionResetError):
        return True


def trickle(sockets: list[socket.socket], until: float) -> set[int]:
    """Keeps every socket trickling until each is closed by the server or ``until`` passes;
    the indexes of the closed ones."""
    closed: set[int] = set()
    while len(closed) < len(sockets) and time.monotonic() < until:
        for index, sock in enumerate(sockets):
            if index not in closed and closed_by_server(sock):
                closed.add(index)
        time.sleep(0.5)
    return closed


def test_headers_that_trickle_are_cut_off(tmp_path: Path) -> None:
    env = new_user(tmp_path, COMPACTION_GATEWAY_HEADER_TIMEOUT_S="2")
    with gateway(env, tmp_path) as (url, _process), slow_sockets(url, 100) as slow:
        # a kept-alive connection whose second request trickles is cut off too
        with socket.create_connection(address(url), timeout=10) as kept:
            kept.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert kept.recv(4096).startswith(b"HTTP/1.1 200")
            kept.sendall(b"GET /healthz HTTP/1.1\r\n")
            started = time.monotonic()
            closed = trickle([*slow, kept], started + TRICKLE_S)
            took = time.monotonic() - started
        assert len(closed) == 101, f"{101 - len(closed)} slow connections still open"
        assert took < TRICKLE_S
        assert httpx.get(f"{url}/healthz").status_code == 200


def test_past_the_connection_cap_a_request_is_503_at_once(tmp_path: Path) -> None:
    env = new_user(
        tmp_path,
        COMPACTION_GATEWAY_MAX_CONNECTIONS="20",
        COMPACTION_GATEWAY_HEADER_TIMEOUT_S="3",
    )
    with gateway(env, tmp_path) as (url, _process):
        with slow_sockets(url, 25) as slow:
            over = httpx.get(f"{url}/healthz", timeout=10)
            assert over.status_code == 503
            assert len(trickle(slow, time.monotonic() + TRICKLE_S)) == 25
        assert httpx.get(f"{url}/healthz", timeout=10).status_code == 200
