"""``compaction worker``: RQ workers on the ``compaction`` queue, JSON serializer only, that
run the job function and nothing else (``worker.rq_guard``).

The default worker class runs jobs in its own process (RQ's ``SimpleWorker``): about 4 ms per
job against about 23 ms for the forking ``Worker`` on these machines, and its auxiliary clients
stay warm between jobs (``benchmarks/worker.py`` measures both). ``--fork`` isolates each job in
a child process instead. ``--pool N`` runs N such workers.

Every worker, busy or idle, also watches for requests whose worker died (``worker.inflight``:
``watching``), so such a request ends within the lock's TTL whether or not another comes.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import time
from typing import Any

import redis
from rq import SimpleWorker
from rq.worker_pool import WorkerPool

from compaction.service import logs
from compaction.service.redis import redis_client
from compaction.service.settings import Settings
from compaction.worker import inflight, metrics
from compaction.worker.rq_guard import WORKER_OPTIONS, ForkingWorker
from compaction.worker.runtime import Runtime, current, install

log = logs.get_logger("compaction.worker")
MAX_BACKOFF_S = 10.0


class WatchingWorker(SimpleWorker):
    """RQ's ``SimpleWorker``, watching for dead workers' requests while it works."""

    def work(self, *args: Any, **kwargs: Any) -> bool:
        with inflight.watching(current()):
            return super().work(*args, **kwargs)


class WatchingForkingWorker(ForkingWorker):
    """``ForkingWorker``, watching (in the worker, not its work horses) while it works."""

    def work(self, *args: Any, **kwargs: Any) -> bool:
        with inflight.watching(current()):
            return super().work(*args, **kwargs)


def register(commands: Any) -> None:
    parser = commands.add_parser("worker", help="run compaction workers")
    parser.add_argument("--burst", action="store_true", help="exit when the queue is empty")
    parser.add_argument("--pool", type=int, default=1, metavar="N", help="worker processes")
    parser.add_argument("--fork", action="store_true", help="run each job in a child process")
    parser.add_argument("--metrics-port", type=int, help="serve Prometheus metrics here")
    parser.add_argument("--log-level", default="INFO")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    settings = Settings()
    # The provider SDKs take seconds to import: do it once here, before any job holds a lock
    # (and before a pool forks, so its children share them).
    importlib.import_module("compaction.worker.llm.anthropic_client")
    importlib.import_module("compaction.worker.llm.openai_client")
    # What start-up built lives as long as the process: move it out of the collector's way, so
    # the full collections a 10,000-row history load triggers stop walking it (about half that
    # load's CPU; the store no longer pauses the collector, docs/architecture.md "Tables").
    gc.freeze()
    # Jobs counted in other processes than this one (a pool's workers, work horses) reach
    # /metrics through prometheus_client's multiprocess files.
    port = args.metrics_port or settings.metrics_port
    with metrics.served(port, several_processes=args.pool > 1 or args.fork):
        return _work(args, settings)


def _work(args: argparse.Namespace, settings: Settings) -> int:
    connection = redis_client(settings.redis_url)
    worker_class = WatchingForkingWorker if args.fork else WatchingWorker
    if args.pool > 1:
        pool = WorkerPool(
            [settings.queue_name],
            connection=connection,
            num_workers=args.pool,
            worker_class=worker_class,
            **WORKER_OPTIONS,
        )
        pool.start(burst=args.burst, logging_level=args.log_level)
        return 0
    install(Runtime.from_settings(settings))  # built before the first job: warm at once
    backoff = 0.5
    while True:
        try:
            worker = worker_class([settings.queue_name], connection=connection, **WORKER_OPTIONS)
            worker.work(burst=args.burst, logging_level=args.log_level)
            return 0
        except redis.ConnectionError as err:
            # RQ's loop gives up when Redis vanishes under it; a worker should outlive a
            # Redis restart, so start a fresh RQ worker once Redis answers again.
            log.warning("redis unavailable; the worker restarts", error=str(err), backoff_s=backoff)
            time.sleep(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF_S)
