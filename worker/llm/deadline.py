"""One deadline per attempt for the auxiliary model's HTTP calls (docs/architecture.md,
"Settings": ``LLM_TIMEOUT_S`` bounds each attempt, ``LLM_MAX_RETRIES`` counts them).

The SDKs' timeouts are httpx's, and each bounds one socket operation: a reply trickled a byte at
a time never trips them. Here every socket operation of an attempt (connect, TLS handshake,
each write and each read, the status line and headers included) waits at most until the
attempt's deadline, and one that would start after it fails at once, with the timeout error
httpx raises for a slow read. The SDK retries it and reports the last one as its timeout error,
so the job gets ``llm_timeout``.

Nothing runs beside the call: no watchdog thread, no abandoned call still holding a
connection. The attempt's own blocking read is what gives up, and httpx closes that connection
as after any timeout.

httpx2's transport takes no network backend, so the one its connection pool was built with is
wrapped after the fact (httpcore's pools, proxies included, keep it in ``_network_backend`` and
read it for each new connection); the client's two transport factories are overridden so that
a proxy taken from the environment gets the deadline too.

httpx2 and the SDKs log requests with their URL, whose text holds the credentials a base URL
carries: their records show it masked (``store.records.mask_url``).
"""

from __future__ import annotations

import logging
import ssl
import time
from collections.abc import Iterable
from contextvars import ContextVar
from typing import Any

import httpcore2
import httpx2

from compaction.store.records import mask_url

# The deadline of the attempt this thread is making. Set when an attempt starts and read by
# its socket operations, including the body's, which httpx reads after the transport returns
# (so it is not reset on the way out: the next attempt replaces it).
_DEADLINE: ContextVar[float | None] = ContextVar("llm_attempt_deadline", default=None)


def _left(timeout: float | None, error: type[httpcore2.TimeoutException]) -> float | None:
    """``timeout`` cut to what is left of the attempt; ``error`` when nothing is."""
    deadline = _DEADLINE.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise error("the attempt's deadline passed")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore2.NetworkStream):
    def __init__(self, stream: httpcore2.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _left(timeout, httpcore2.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _left(timeout, httpcore2.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore2.NetworkStream:
        left = _left(timeout, httpcore2.ConnectTimeout)
        return _Stream(self._stream.start_tls(ssl_context, server_hostname, left))

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _Backend(httpcore2.NetworkBackend):
    def __init__(self, backend: httpcore2.NetworkBackend) -> None:
        self._backend = backend

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore2.SOCKET_OPTION] | None = None,
    ) -> httpcore2.NetworkStream:
        left = _left(timeout, httpcore2.ConnectTimeout)
        return _Stream(self._backend.connect_tcp(host, port, left, local_address, socket_options))

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore2.SOCKET_OPTION] | None = None,
    ) -> httpcore2.NetworkStream:
        left = _left(timeout, httpcore2.ConnectTimeout)
        return _Stream(self._backend.connect_unix_socket(path, left, socket_options))

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


class DeadlineTransport(httpx2.HTTPTransport):
    """httpx2's transport, each request through it one attempt with ``seconds`` to finish."""

    def __init__(self, seconds: float, **options: Any) -> None:
        super().__init__(**options)
        self.seconds = seconds
        self._pool._network_backend = _Backend(self._pool._network_backend)

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        _DEADLINE.set(time.monotonic() + self.seconds)
        return super().handle_request(request)


class DeadlineClient(httpx2.Client):
    """An httpx2 client whose every attempt, direct or through a proxy, has one deadline of
    ``seconds``."""

    def __init__(self, seconds: float, **options: Any) -> None:
        self.seconds = seconds  # read by the transport factories below, called by __init__
        super().__init__(**options)

    def _init_transport(self, **options: Any) -> httpx2.BaseTransport:  # type: ignore[override]
        transport = options.pop("transport", None)
        return transport or DeadlineTransport(self.seconds, **options)

    def _init_proxy_transport(  # type: ignore[override]
        self, proxy: httpx2.Proxy, **options: Any
    ) -> httpx2.BaseTransport:
        return DeadlineTransport(self.seconds, proxy=proxy, **options)


class _MaskedUrls(logging.Filter):
    """Shows the URLs a record carries (``HTTP Request: POST <url> ...``) with their
    credentials masked; ``str(url)`` holds them."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(
                mask_url(str(arg)) if isinstance(arg, httpx2.URL) else arg for arg in record.args
            )
        return True


# The loggers that are handed a request's URL (a logger's filters see only its own records).
for _name in ("httpx2", "anthropic._base_client", "openai._base_client"):
    logging.getLogger(_name).addFilter(_MaskedUrls())
