"""``compaction gateway`` once its options are checked (``cli/gateway.py``): the resources,
embedded or on the configured services, served by uvicorn (docs/architecture.md, "The
gateway")."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources as package_files
from typing import Any, TextIO

import uvicorn
from sqlalchemy.engine import make_url
from uvicorn.protocols.http.h11_impl import H11Protocol

from compaction.cli.common import prepare_database
from compaction.cli.demo import BUNDLED
from compaction.cli.sessions import read_transcript
from compaction.gateway import Resources, create_app
from compaction.gateway.embedded import Bundled, Embedded, embedded, is_embedded
from compaction.gateway.resources import GatewayOptions
from compaction.producers.context import Producers
from compaction.service.settings import Settings
from compaction.store.records import mask_url


def serve_gateway(settings: Settings, args: argparse.Namespace, out: TextIO | None) -> int:
    # The provider SDKs take seconds to import: once here, not in the first turn that needs a
    # channel's model (as ``compaction worker`` does before its first job).
    importlib.import_module("compaction.worker.llm.anthropic_client")
    importlib.import_module("compaction.worker.llm.openai_client")
    options = GatewayOptions.from_settings(settings)
    if is_embedded(settings):
        with embedded(settings, bundled(), options) as running:
            describe_embedded(running, out)
            return serve(running.resources, args, out)
    prepare_database(settings.database_url)  # the SQLite default; a server database: migrate
    masked_db = make_url(settings.database_url).render_as_string(hide_password=True)
    print("compaction gateway: on the configured services", file=out)
    print(f"  database: {masked_db}", file=out)
    print(f"  redis:    {mask_url(settings.redis_url)} (compaction worker runs the jobs)", file=out)
    resources = Resources(settings, Producers.from_settings(settings), options=options)
    return serve(resources, args, out)


def bundled() -> list[Bundled]:
    """The demo's transcripts, one session each (the English one last: newest, listed first)."""
    found = []
    for language in ("zh", "en"):
        source = package_files.files("compaction.cli.demo_data").joinpath(BUNDLED[language])
        with package_files.as_file(source) as path:
            found.append(Bundled(f"demo-{language}", read_transcript(path)))
    return found


def describe_embedded(running: Embedded, out: TextIO | None) -> None:
    store = running.resources.producers.store
    counts = ", ".join(f"{s} ({len(store.load_history(s))} messages)" for s in running.sessions)
    print("compaction gateway: embedded (no COMPACTION_DATABASE_URL or REDIS_URL set)", file=out)
    print(f"  database: {running.resources.settings.database_url} (removed on exit)", file=out)
    print("  redis:    in-process (fakeredis), with an in-process worker", file=out)
    print("  summary:  offline extractive summarizer until an auxiliary channel is added", file=out)
    print(f"  sessions: {counts}", file=out)


class _Server(uvicorn.Server):
    """Says where the console is once it listens (the port is known then, even ``--port 0``)."""

    def __init__(self, config: uvicorn.Config, out: TextIO | None) -> None:
        super().__init__(config)
        self.out = out

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets)
        if self.started:
            host, port = self.servers[0].sockets[0].getsockname()[:2]
            print(f"console: http://{_shown(host)}:{port}/", file=self.out, flush=True)


def _shown(host: str) -> str:
    """The address to open: a wildcard listens on the loopback too."""
    if host in ("0.0.0.0", "::"):
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host


def serve(resources: Resources, args: argparse.Namespace, out: TextIO | None) -> int:
    settings = resources.settings
    config = uvicorn.Config(
        create_app(resources),
        host=args.host,
        port=args.port,
        log_level=args.log_level.lower(),
        log_config=None,  # uvicorn's records go through the command's JSON lines on stderr
        http=headers_within(settings.gateway_header_timeout_s),
        # Past the cap uvicorn answers a new request 503 at once (docs/operations.md, "The
        # gateway in production"): memory and tasks stay bounded whatever is connected.
        limit_concurrency=settings.gateway_max_connections,
    )
    server = _Server(config, out)
    try:
        with _stopped_quietly():
            server.run()
    except SystemExit:
        if server.started:
            raise
        raise OSError(f"the gateway could not listen on {args.host}:{args.port}") from None
    return 0


def headers_within(timeout_s: float) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol, with a deadline on each request's headers: uvicorn bounds only
    the idle time between requests (``timeout_keep_alive``), and h11 only their size, so a
    client sending one header line every few seconds (slowloris) held its connection forever.
    The deadline runs from the connection's start, or a kept-alive connection's next byte,
    until h11 has the whole head; then the connection is closed."""

    class HeadersWithin(H11Protocol):
        deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            if self._between_requests():
                self._arm()
            super().data_received(data)
            # a new request's head parsed, or the connection handed to a WebSocket
            if not self._between_requests() or self.transport.get_protocol() is not self:
                self._disarm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _between_requests(self) -> bool:
            return self.cycle is None or self.cycle.response_complete

        def _arm(self) -> None:
            if self.deadline is None:
                self.deadline = self.loop.call_later(timeout_s, self._too_slow)

        def _disarm(self) -> None:
            if self.deadline is not None:
                self.deadline.cancel()
                self.deadline = None

        def _too_slow(self) -> None:
            self.deadline = None
            if not self.transport.is_closing():
                self.transport.close()

    return HeadersWithin


@contextmanager
def _stopped_quietly() -> Iterator[None]:
    """uvicorn shuts down on SIGINT or SIGTERM, then raises the signal again for the handler
    it found: this one ignores it, so the embedded services are still stopped and removed and
    the command exits 0."""
    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.signal(sig, lambda *_: None) for sig in signals}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
