"""Benchmark of the worker (DESIGN §8 "Worker processes"): per-job overhead, RQ's own cost per
job, and scale-out over worker processes.

    python -m benchmarks.worker [--repeat N] [--workers 1,4,16,32] [--jobs 20,50,200,200]
                                [--skip-scale]

1. Overhead. The largest shared transcript (``cc_spotter_ae4a77f8``) in a PostgreSQL-backed
   store; a ``SimpleWorker`` already running in another process takes each job (the real job,
   with a ``Runtime`` whose ``client_factory`` answers instantly in-process, and timers around
   the core, the store and the publisher). Per job, from ``enqueue`` to the ``compaction_done``
   event received on pub/sub: the queue hop (enqueue to the job function's first line), the
   core (``compact()`` less the LLM), the LLM, the store (every ``Store`` call and the write
   plan), the publishes up to ``compaction_done``, and the rest (lock, pending key, RQ). The
   service overhead (end to end less the LLM and the core) is set against a floor measured in
   the same run with plain psycopg and redis-py: the same SELECT of the session's visible rows,
   the summary INSERT and the range UPDATE in one transaction, and one PUBLISH (goal: ratio
   <= 3; queue hop median <= 10 ms). Medians of ``--repeat`` jobs.
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
``redis://127.0.0.1:6379/12``), a database this benchmark flushes at the start and the end.
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
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, TypeVar

import psycopg
import redis
import rq
from rq import Queue, SimpleWorker, Worker
from rq.serializers import JSONSerializer

from benchmarks.engine import SUMMARY, InstantSummarizer, window_for
from benchmarks.engine import load_transcript as load
from benchmarks.processes import REDIS_URL, ROOT, start, stop, wait_for_workers, worker_env
from benchmarks.scale import scale_out
from benchmarks.store import VISIBLE, libpq_url, migrated_store, sessions
from compaction import CompactionConfig, compact
from compaction.contract import CompactionDone, CompactionRequested
from service.keys import events_channel
from service.queue import compaction_queue, enqueue
from store import Store

LARGEST = "cc_spotter_ae4a77f8"
TIMINGS_KEY = "bench:timings"
NOOP = "benchmarks.worker.noop"
T = TypeVar("T")


def noop() -> None:
    """The no-op job of part 2."""


# --- the worker process of part 1 ------------------------------------------------------------


class Timers:
    """Exclusive seconds per component for the job being run (reset when a job starts): time
    spent in a nested measured call (the store read that resolves the channel, the LLM, both
    inside ``compact()``) counts for the inner component only."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.nested: list[float] = []
        self.done = False

    def reset(self) -> None:
        self.seconds.clear()
        self.nested.clear()
        self.done = False

    @contextmanager
    def measure(self, name: str, detail: str | None = None) -> Iterator[None]:
        self.nested.append(0.0)
        started = time.perf_counter()
        try:
            yield
        finally:
            elapsed = time.perf_counter() - started
            inner = self.nested.pop()
            self.seconds[name] += elapsed - inner
            if detail:
                self.seconds[detail] += elapsed - inner
            if self.nested:
                self.nested[-1] += elapsed

    def timed(
        self, name: str, call: Callable[..., T], detail: str | None = None
    ) -> Callable[..., T]:
        def wrapper(*args: Any, **kwargs: Any) -> T:
            with self.measure(name, detail):
                return call(*args, **kwargs)

        return wrapper


class InstantClient:
    """A ``ChatClient`` that answers at once, without I/O."""

    provider = "fake"

    def __init__(self, model: str, timers: Timers) -> None:
        self.model = model
        self.timers = timers

    def complete(self, prompt: str, max_tokens: int) -> Any:
        from worker.llm import Completion

        with self.timers.measure("llm"):
            return Completion(SUMMARY, len(prompt) // 4, len(SUMMARY) // 4)


class TimedStore:
    """Every call to the wrapped ``Store`` counts as store time."""

    def __init__(self, inner: Store, timers: Timers) -> None:
        self._inner = inner
        self._timers = timers

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._inner, name)
        if not callable(attribute):
            return attribute
        return self._timers.timed("store", attribute, f"store.{name}")


def overhead_worker() -> None:
    """Part 1's worker (its own process; settings from the environment): the real job on a
    ``SimpleWorker``, instrumented. Each job pushes its timings to ``TIMINGS_KEY``."""
    import worker.jobs as jobs
    import worker.pipeline as pipeline
    from service.redis import redis_client
    from service.settings import Settings
    from worker.runtime import Runtime, install

    settings = Settings()
    runtime = Runtime.from_settings(settings)
    timers = Timers()
    runtime.client_factory = lambda channel: InstantClient(channel.model, timers)
    runtime.store = TimedStore(runtime.store, timers)  # type: ignore[assignment]
    publish = runtime.publisher.publish

    def timed_publish(event: Any) -> bool:
        with timers.measure("publish_after" if timers.done else "publish"):
            sent = publish(event)
        timers.done = timers.done or event.type == "compaction_done"
        return sent

    runtime.publisher.publish = timed_publish  # type: ignore[method-assign]
    pipeline.compact = timers.timed("core", pipeline.compact)  # type: ignore[assignment]
    pipeline.compaction_write = timers.timed(  # type: ignore[assignment]
        "store", pipeline.compaction_write, "store.compaction_write"
    )
    entry = jobs.compaction_requested

    def compaction_requested(payload: dict[str, Any]) -> dict[str, Any]:
        timers.reset()
        started_at, started = time.time(), time.perf_counter()
        result = entry(payload)
        record = {**timers.seconds, "job": time.perf_counter() - started}
        record.update(start=started_at, request=payload.get("requestId"))
        runtime.redis.rpush(TIMINGS_KEY, json.dumps(record))
        return result

    jobs.compaction_requested = compaction_requested  # RQ looks the function up by name
    install(runtime)
    connection = redis_client(settings.redis_url)
    SimpleWorker([settings.queue_name], connection=connection, serializer=JSONSerializer).work(
        logging_level="WARNING"
    )


def rq_noop_overhead(redis_url: str, count: int) -> None:
    """Part 2 (its own process): seconds per no-op job for each worker class, as JSON."""
    # What a ``compaction worker`` process holds once it has run a job: the command, and the
    # LLM SDKs (imported on the first job since they load lazily); the fork copies all of it.
    from cli import worker as _cli  # noqa: F401
    from service.settings import Settings
    from worker.llm import anthropic_client, openai_client  # noqa: F401
    from worker.runtime import Runtime, install

    install(Runtime.from_settings(Settings()))
    connection = redis.Redis.from_url(redis_url)
    queue = Queue("bench-noop", connection=connection, serializer=JSONSerializer)
    base = 10

    def burst(worker_class: type[SimpleWorker] | type[Worker], jobs: int) -> float:
        queue.empty()
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


def floor_once(
    conn: psycopg.Connection[Any], client: redis.Redis, session_id: str, summary: str, done: str
) -> float:
    """The floor: the visible rows, the summary INSERT and range UPDATE, one PUBLISH."""
    started = time.perf_counter()
    rows = conn.execute(VISIBLE, (session_id,)).fetchall()
    first_seq, last_seq = rows[3][2], rows[-4][2]  # a head and a tail, as the core keeps them
    with conn.transaction(), conn.cursor() as cur:
        cur.execute(
            "INSERT INTO message (session_id, seq, seq_minor, role, content, "
            "is_compaction_summary, created_at) VALUES (%s, %s, 1, 'user', %s, true, now()) "
            "RETURNING id",
            (session_id, last_seq, summary),
        )
        row = cur.fetchone()
        assert row is not None
        cur.execute(
            "UPDATE message SET compacted_at = now(), compacted_into_id = %s WHERE session_id = %s "
            "AND seq BETWEEN %s AND %s AND compacted_at IS NULL AND id <> %s",
            (row[0], session_id, first_seq, last_seq, row[0]),
        )
    client.publish(events_channel("compaction"), done)
    return time.perf_counter() - started


def median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def overhead(store: Store, url: str, client: redis.Redis, repeat: int) -> None:
    messages = load(LARGEST)
    window = window_for(messages)
    ours = sessions(store, messages, repeat + 3)  # three warm-up jobs
    floors = sessions(store, messages, repeat + 3)
    numbered = [replace(m, id=i) for i, m in enumerate(messages, start=1)]
    config = CompactionConfig(context_window=window)
    result = compact(numbered, config, InstantSummarizer(), reason="manual")
    summary = result.summary_text
    done_event = CompactionDone(
        session_id=floors[0],
        request_id="0" * 32,
        reason="manual",
        removed_count=result.removed_count,
        summary_message_id=1,
        tokens_before=result.tokens_before,
        tokens_after=result.tokens_after,
        run_id=1,
    ).to_json()
    print(
        f"\n1. overhead: {LARGEST}, {len(messages)} messages, ~{result.tokens_before:,} tokens, "
        f"window {window:,}; {result.removed_count} rows summarized; median of {repeat} jobs"
    )

    process = start(
        [sys.executable, "-c", "from benchmarks.worker import overhead_worker; overhead_worker()"],
        worker_env(url),
    )
    try:
        wait_for_workers(client, 1, process)
        queue = compaction_queue(client)
        pubsub = client.pubsub(ignore_subscribe_messages=True)
        pubsub.subscribe(events_channel("compaction"))
        records: list[dict[str, float]] = []
        for index, session_id in enumerate(ours):
            request = CompactionRequested(
                session_id=session_id, reason="manual", context_window=window
            )
            enqueued = time.time()
            enqueue(queue, request, timeout_s=120)
            ended = wait_done(pubsub, request.request_id)
            reply = client.blpop([TIMINGS_KEY], timeout=30)
            if reply is None:
                raise RuntimeError("the worker sent no timings")
            record = json.loads(reply[1])
            record.update(total=ended - enqueued, hop=record["start"] - enqueued)
            if index >= 3:
                records.append(record)
            time.sleep(0.05)  # RQ's bookkeeping after the job, then BLPOP again
        pubsub.close()
    finally:
        stop(process)

    floor_times = []
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        for session_id in floors:
            floor_times.append(floor_once(conn, client, session_id, summary, done_event))
    floor_times = floor_times[3:]

    def med(name: str) -> float:
        return median_ms([r.get(name, 0.0) for r in records])

    def part(r: dict[str, float], name: str) -> float:
        return r.get(name, 0.0)

    core = med("core")
    service = median_ms([r["total"] - part(r, "core") - part(r, "llm") for r in records])
    rest = median_ms(
        [
            r["total"] - r["hop"] - sum(part(r, k) for k in ("core", "llm", "store", "publish"))
            for r in records
        ]
    )
    floor = median_ms(floor_times)
    print(
        f"   end to end {med('total'):7.1f} ms = queue hop {med('hop'):5.1f} + core "
        f"{core:6.1f} + llm {med('llm'):4.2f} + store {med('store'):6.1f} + publish "
        f"{med('publish'):4.2f} + rest {rest:5.1f} (lock, pending key, RQ; medians)"
    )
    print(
        f"   overhead (end to end - llm - core) {service:6.1f} ms; floor (psycopg SELECT + "
        f"INSERT + UPDATE, one PUBLISH) {floor:5.1f} ms; ratio {service / floor:5.2f} "
        "(goal <= 3)"
    )
    details = sorted(
        ((med(k), k.removeprefix("store.")) for k in records[0] if k.startswith("store.")),
        reverse=True,
    )
    print("   store by call (median ms): " + ", ".join(f"{n} {ms:.1f}" for ms, n in details))
    hops = sorted(r["hop"] * 1000 for r in records)
    print(
        f"   queue hop (enqueue -> job function) median {statistics.median(hops):5.2f} ms, "
        f"max {hops[-1]:5.2f} ms (goal: median <= 10 ms)"
    )


def wait_done(pubsub: Any, request_id: str, timeout: float = 60.0) -> float:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        message = pubsub.get_message(timeout=1.0)
        if message is None:
            continue
        event = json.loads(message["data"])
        if event.get("requestId") == request_id and event["type"] != "compaction_start":
            if event["type"] != "compaction_done":
                raise RuntimeError(f"the job ended {event['type']}: {event}")
            return time.time()
    raise RuntimeError(f"request {request_id} did not finish within {timeout:g} s")


def noop_overhead(url: str, count: int) -> None:
    code = (
        f"from benchmarks.worker import rq_noop_overhead; rq_noop_overhead({REDIS_URL!r}, {count})"
    )
    output = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=worker_env(url),
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=20, help="jobs measured in part 1")
    parser.add_argument("--noop-jobs", type=int, default=100, help="no-op jobs in part 2")
    parser.add_argument("--workers", default="1,4,16,32", help="worker counts of part 3")
    parser.add_argument("--jobs", default="20,50,200,200", help="jobs per worker count")
    parser.add_argument("--skip-scale", action="store_true", help="skip part 3")
    args = parser.parse_args(argv)
    counts = [int(n) for n in args.workers.split(",") if n.strip()]
    jobs = [int(n) for n in args.jobs.split(",") if n.strip()]
    if len(jobs) != len(counts):
        parser.error("--jobs needs one figure per --workers count")
    print(f"$ python -m benchmarks.worker {' '.join(argv or sys.argv[1:])}".rstrip())
    client = redis.Redis.from_url(REDIS_URL)
    client.flushdb()
    with migrated_store() as (url, store):
        try:
            with psycopg.connect(libpq_url(url), autocommit=True) as conn:
                server = conn.execute("SHOW server_version").fetchone()
            print(
                f"python {platform.python_version()} on {platform.machine()}, "
                f"{os.cpu_count()} CPUs, PostgreSQL {server[0].split()[0] if server else '?'}, "
                f"Redis {client.info('server')['redis_version']}, rq {rq.__version__}"
            )
            store.add_channel(
                "bench-instant",
                provider="openai-compatible",
                model="instant",
                auxiliary=True,
                default=True,
            )
            overhead(store, url, client, args.repeat)
            noop_overhead(url, args.noop_jobs)
            if not args.skip_scale:
                scale_out(store, url, client, counts, jobs)
        finally:
            client.flushdb()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
