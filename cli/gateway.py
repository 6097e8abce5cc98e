"""``compaction gateway``: the reference gateway and its web console under uvicorn
(docs/architecture.md, "The gateway").

With no database and no Redis configured it runs embedded (``gateway.embedded``): everything in
this process, the bundled transcripts already imported. Otherwise it is one of many stateless
gateway processes in front of ``compaction worker`` processes. Without
``COMPACTION_GATEWAY_TOKEN`` anyone who can reach it can use the API, so it listens on the
loopback only and refuses any other host.
"""

from __future__ import annotations

import argparse
import importlib
import ipaddress
import sys
from typing import Any, TextIO

from compaction.core.errors import InvalidConfig
from compaction.service.settings import Settings


def register(commands: Any) -> None:
    parser = commands.add_parser("gateway", help="the HTTP API, WebSocket, SSE and web console")
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1; another needs COMPACTION_GATEWAY_TOKEN)",
    )
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000; 0: any)")
    parser.add_argument("--log-level", default="WARNING")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    settings = Settings()
    check_host(args.host, settings)
    if settings.gateway_token is None:
        print(
            "compaction gateway: no COMPACTION_GATEWAY_TOKEN set: listening on "
            f"{args.host} only, the API open to anyone on this machine",
            file=sys.stderr,
        )
    # FastAPI, uvicorn and the chat SDKs take most of a second to import: only this command
    # pays for them, not every other one.
    serving = importlib.import_module("compaction.cli.gateway_serve")
    code: int = serving.serve_gateway(settings, args, out)
    return code


def check_host(host: str, settings: Settings) -> None:
    """Without a token only a loopback address is allowed."""
    if settings.gateway_token is None and not is_loopback(host):
        raise InvalidConfig(
            f"--host {host} needs COMPACTION_GATEWAY_TOKEN: without a token the gateway "
            "listens on 127.0.0.1 only"
        )


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: it may resolve to anything
        return False
