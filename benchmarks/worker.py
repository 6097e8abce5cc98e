"""Benchmark of the worker (DESIGN §8 "Worker processes"): per-job overhead, RQ's own cost per
job, and scale-out over worker processes.

    python -m benchmarks.worker [--repeat N] [--workers 1,4,16,32] [--jobs 20,50,200,200]
                                [--skip-scale] [--window N] [--sql]

1. Overhead (``benchmarks/overhead.py``). The largest shared transcript
   (``cc_spotter_ae4a77f8``) in a PostgreSQL-backed store, compacted by ``/compact`` under the
   transcript tests' window (``--window``: another; 30000 makes the history stage alone not
   enough, so the loop stage runs too); a ``SimpleWorker`` already running in another process
   (``benchmarks/timed_worker.py``; ``gc.freeze()`` once started, as in ``compaction worker``)
   takes each job (the real job, with a ``Runtime`` whose ``client_factory`` answers instantly
   in-process, and timers around each phase of the run). Per job, from ``enqueue`` to the
   request's final ``compaction_done`` received on pub/sub (a stage's done that another stage
   follows is not final): the overhead is that less the auxiliary model's own time, the core
   included, set against a floor measured after each job with plain psycopg and redis-py: the
   same SELECT of the session's visible rows, the summary INSERT and the range UPDATE in one
   transaction (an UPDATE of as many rows as the job compacted; step 11's floor, a range of
   all but three rows at each end, beside it), and one PUBLISH (goal: ratio <= 2, issue 24;
   queue hop median <= 10 ms). Beside it, the
   older figure that leaves the core out too. Then where the time goes (summed over the
   request's stages): the queue hop (enqueue to the job function's first line), the load
   (session, agent, history), the decision (estimates, skip rules, first stage), the core and
   its phases, the announce ("compacting…" row), the write, the publishes up to the final
   ``compaction_done``, and the rest (lock, pending key, in-flight record, RQ); what runs after
   that (``token_update``, the lock's release) is given apart; with ``--sql``, each SQL statement
   the worker's store runs, timed on its own. Medians of ``--repeat`` jobs.
2. RQ's per-job cost for a no-op job, ``SimpleWorker`` against the forking ``Worker``, in a
   process that has imported and built what ``compaction worker`` does (DESIGN: ~4 ms, ~23 ms).
3. Scale-out (``benchmarks/scale.py``). Sessions holding ``msa_deepseek-chat_pydicom-1139``,
   the fake auxiliary model of ``tests/llm_server.py`` answering every request after 1 s, and
   ``compaction worker --pool N`` (``compaction worker`` for N = 1). Once the N workers are up
   and have each run one warm-up job, ``--jobs`` jobs (per row) are enqueued at once; prints
   jobs/s, efficiency against the ideal of N jobs/s (and against ceil(jobs/N) whole seconds),
   and each worker process's memory (RSS and PSS from /proc) after the run (goal: >= 85% at 16).

Nothing is asserted. The database is ``COMPACTION_BENCH_POSTGRES_URL``, or a throwaway one (see
``benchmarks/store.py``); Redis is ``COMPACTION_BENCH_REDIS_URL`` (default
``redis://127.0.0.1:6379/0``), shared: each part works under a random key prefix and queue
name of its own (``tests/namespace.py``) and deletes only its own keys afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import psycopg
import redis
import rq
from rq import Queue, SimpleWorker, Worker
from rq.serializers import JSONSerializer

from benchmarks.overhead import overhead
from benchmarks.processes import REDIS_URL, worker_env
from benchmarks.scale import scale_out
from benchmarks.store import libpq_url, migrated_store
from compaction.store import Store
from tests.namespace import RedisNamespace, scoped
from tests.processes import ROOT

NOOP = "benchmarks.worker.noop"


def noop() -> None:
    """The no-op job of part 2."""


def rq_noop_overhead(count: int) -> None:
    """Part 2 (its own process; settings from the environment): seconds per no-op job for each
    worker class, as JSON."""
    # What a ``compaction worker`` process holds once it has run a job: the command, and the
    # LLM SDKs (imported on the first job since they load lazily); the fork copies all of it.
    from compaction.cli import worker as _cli  # noqa: F401
    from compaction.service.settings import Settings
    from compaction.worker.llm import anthropic_client, openai_client  # noqa: F401
    from compaction.worker.runtime import Runtime, install

    settings = Settings()
    install(Runtime.from_settings(settings))
    connection = redis.Redis.from_url(settings.redis_url)
    queue = Queue(settings.queue_name, connection=connection, serializer=JSONSerializer)
    base = 10

    def burst(worker_class: type[SimpleWorker] | type[Worker], jobs: int) -> float:
        queue.empty()  # type: ignore[no-untyped-call]
        for _ in range(jobs):
            queue.enqueue_call(NOOP, result_ttl=60)
        started = time.perf_counter()
        worker_class([queue], connection=connection, serializer=JSONSerializer).work(
            burst=True, logging_level="WARNING"
        )
        return time.perf_counter() - started

    out = {}
    for worker_class in (SimpleWorker, Worker):
        burst(worker_class, base)  # warm-up: first connections, scripts, imports
        out[worker_class.__name__] = statistics.median(
            (burst(worker_class, base + count) - burst(worker_class, base)) / count
            for _ in range(3)
        )
    print(json.dumps(out))


def noop_overhead(url: str, count: int) -> None:
    code = f"from benchmarks.worker import rq_noop_overhead; rq_noop_overhead({count})"
    namespace = RedisNamespace.fresh(REDIS_URL, tag="bench")
    with scoped(namespace):
        output = subprocess.run(
            [sys.executable, "-c", code],
            cwd=ROOT,
            env=worker_env(url, namespace),
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    figures = json.loads(output.strip().splitlines()[-1])
    print(
        f"\n2. RQ per-job cost, no-op job (burst of 10 + {count} jobs less a burst of 10, "
        "median of 3; JSON serializer): "
        f"SimpleWorker {figures['SimpleWorker'] * 1000:5.1f} ms, "
        f"forking Worker {figures['Worker'] * 1000:5.1f} ms (DESIGN: ~4 ms, ~23 ms)"
    )


def versions(url: str) -> str:
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        server = conn.execute("SHOW server_version").fetchone()
    with redis.Redis.from_url(REDIS_URL) as client:
        redis_version = client.info("server")["redis_version"]
    return (
        f"python {platform.python_version()} on {platform.machine()}, "
        f"{os.cpu_count()} CPUs, PostgreSQL {server[0].split()[0] if server else '?'}, "
        f"Redis {redis_version}, rq {rq.__version__}"
    )


def add_instant_channel(store: Store) -> None:
    store.add_channel(
        "bench-instant",
        provider="openai-compatible",
        model="instant",
        auxiliary=True,
        default=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=20, help="jobs measured in part 1")
    parser.add_argument("--noop-jobs", type=int, default=100, help="no-op jobs in part 2")
    parser.add_argument("--workers", default="1,4,16,32", help="worker counts of part 3")
    parser.add_argument("--jobs", default="20,50,200,200", help="jobs per worker count")
    parser.add_argument("--skip-scale", action="store_true", help="skip part 3")
    parser.add_argument("--window", type=int, help="part 1's context window (30000: two stages)")
    parser.add_argument("--sql", action="store_true", help="part 1: each SQL statement's time")
    args = parser.parse_args(argv)
    counts = [int(n) for n in args.workers.split(",") if n.strip()]
    jobs = [int(n) for n in args.jobs.split(",") if n.strip()]
    if len(jobs) != len(counts):
        parser.error("--jobs needs one figure per --workers count")
    print(f"$ python -m benchmarks.worker {' '.join(argv or sys.argv[1:])}".rstrip())
    with migrated_store() as (url, store):
        print(versions(url))
        add_instant_channel(store)
        overhead(store, url, args.repeat, args.window, args.sql)
        noop_overhead(url, args.noop_jobs)
        if not args.skip_scale:
            scale_out(store, url, counts, jobs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
