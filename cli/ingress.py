"""``compaction ingress``: reads ``compaction:requests`` (docs/architecture.md, "The job") and
enqueues the jobs."""

from __future__ import annotations

import argparse
import signal
from typing import Any

from compaction.service.redis import redis_client
from compaction.service.settings import Settings
from compaction.worker.ingress import Ingress


def register(commands: Any) -> None:
    parser = commands.add_parser("ingress", help="enqueue requests XADDed to compaction:requests")
    parser.add_argument("--log-level", default="INFO")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    settings = Settings()
    ingress = Ingress(settings, redis_client(settings.redis_url))
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: ingress.stop.set())
    ingress.run()
    return 0
