"""``compaction ingress``: reads ``compaction:requests`` (DESIGN §6) and enqueues the jobs."""

from __future__ import annotations

import argparse
import signal
from typing import Any

from producers.context import Producers
from producers.ingress import Ingress
from worker import logs


def register(commands: Any) -> None:
    parser = commands.add_parser("ingress", help="enqueue requests XADDed to compaction:requests")
    parser.add_argument("--log-level", default="INFO")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    logs.configure(args.log_level)
    ingress = Ingress(Producers.from_settings())
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: ingress.stop.set())
    ingress.run()
    return 0
