"""Part 1 of ``python -m benchmarks.worker``: the worker's overhead per job.

The largest shared transcript (``cc_spotter_ae4a77f8``) in a PostgreSQL-backed store, compacted
by ``/compact`` under ``window_for``'s window (or ``--window``: a smaller one makes the history
stage alone not enough, so the loop stage runs too); the instrumented worker of
``benchmarks/timed_worker.py``, already running in another process, takes each job. Per job,
from ``enqueue`` to the request's final ``compaction_done`` (``is_final``) received on pub/sub:
the overhead is that less the auxiliary model's own time (the core included), set against a
floor measured after each job with plain psycopg and redis-py (see ``benchmarks/worker.py``);
beside it the older figure, less the core too. Then where the time goes: the queue hop, the
load, the decision, each phase of the core summed over the request's stages, the announce, the
write, the publishes and the rest.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import psycopg
import redis

from benchmarks.engine import InstantSummarizer, window_for
from benchmarks.engine import load_transcript as load
from benchmarks.floor import floor_load
from benchmarks.processes import REDIS_URL, wait_for_workers, worker_env
from benchmarks.store import libpq_url, sessions
from benchmarks.timed_worker import SQL_TIMERS, timings_key
from compaction import CompactionConfig, compact, compact_staged
from compaction.core.contract import CompactionDone, CompactionRequested, is_final, parse_event
from compaction.service.keys import events_channel
from compaction.service.queue import compaction_queue, enqueue
from compaction.store import Store
from tests.namespace import RedisNamespace, scoped
from tests.processes import start, stop

LARGEST = "cc_spotter_ae4a77f8"
WARM_UP = 3  # jobs run first and left out of the figures

Record = dict[str, float]


@dataclass(frozen=True)
class Workload:
    """Sessions for the measured jobs and for the floor, and what the floor writes."""

    window: int
    ours: list[str]
    floors: list[str]
    #: sessions for step 11's floor (its UPDATE spans all but three rows at each end)
    wide: list[str]
    summary: str
    done_event: str


def workload(store: Store, repeat: int, window: int | None = None) -> Workload:
    messages = load(LARGEST)
    window = window or window_for(messages)
    ours = sessions(store, messages, repeat + WARM_UP)
    floors = sessions(store, messages, repeat + WARM_UP)
    wide = sessions(store, messages, repeat + WARM_UP)
    numbered = [replace(m, id=i) for i, m in enumerate(messages, start=1)]
    config = CompactionConfig(context_window=window)
    result = compact(numbered, config, InstantSummarizer(), reason="manual")
    staged = compact_staged(numbered, config, InstantSummarizer(), reason="manual")
    stages = " then ".join(n for n, r in (("history", staged.history), ("loop", staged.loop)) if r)
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
        f"\n1. overhead: {LARGEST}, {len(messages)} messages, ~{result.tokens_before:,} tokens "
        f"(estimated), window {window:,}, threshold {config.threshold_tokens:,}; /compact runs "
        f"{stages} (~{staged.tokens_after:,} tokens after); median of {repeat} jobs"
    )
    return Workload(window, ours, floors, wide, result.summary_text, done_event)


def overhead(
    store: Store, url: str, repeat: int, window: int | None = None, sql: bool = False
) -> None:
    work = workload(store, repeat, window)
    namespace = RedisNamespace.fresh(REDIS_URL, tag="bench")
    with scoped(namespace) as client, psycopg.connect(libpq_url(url), autocommit=True) as conn:
        records = measured_jobs(client, conn, namespace, url, work, sql)
    report(records)


def measured_jobs(
    client: redis.Redis,
    conn: psycopg.Connection[Any],
    namespace: RedisNamespace,
    url: str,
    work: Workload,
    sql: bool = False,
) -> list[Record]:
    """Each session's job through the instrumented worker; the timings of all but the first
    ``WARM_UP``, with the end to end time, the queue hop and the floor measured right after the
    job (the machine is shared: a floor measured apart would see another load)."""
    env = worker_env(url, namespace, **({SQL_TIMERS: "1"} if sql else {}))
    process = start([sys.executable, "-m", "benchmarks.timed_worker"], env)
    records: list[Record] = []
    try:
        wait_for_workers(client, namespace.queue, 1, process)
        queue = compaction_queue(client, namespace.queue)
        pubsub = client.pubsub(ignore_subscribe_messages=True)  # type: ignore[no-untyped-call]
        pubsub.subscribe(events_channel(namespace.prefix))
        for index, session_id in enumerate(work.ours):
            request = CompactionRequested(
                session_id=session_id, reason="manual", context_window=work.window
            )
            enqueued = time.time()
            enqueue(queue, request, timeout_s=120)
            ended, done = wait_done(pubsub, request.request_id)
            reply = client.blpop([timings_key(namespace.prefix)], timeout=30)
            if reply is None:
                raise RuntimeError("the worker sent no timings")
            record = json.loads(reply[1])
            record.update(total=ended - enqueued, hop=record["start"] - enqueued)
            time.sleep(0.05)  # RQ's bookkeeping after the job, then BLPOP again
            # the issue's floor: as many rows UPDATEd as the job compacted; step 11's: a range
            # of all but three rows at each end of the session (docs/benchmarks.md, "Overheads")
            record["floor"], record["floor_rows"] = floor_once(
                conn, client, namespace.prefix, work.floors[index], work, done.removed_count
            )
            record["floor_wide"], _ = floor_once(
                conn, client, namespace.prefix, work.wide[index], work, None
            )
            if index >= WARM_UP:
                records.append(record)
        pubsub.close()
    finally:
        stop(process)
    return records


def wait_done(pubsub: Any, request_id: str, timeout: float = 60.0) -> tuple[float, CompactionDone]:
    """When the request's final event arrived (a stage's done that another follows is not),
    and that event."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        message = pubsub.get_message(timeout=1.0)
        if message is None:
            continue
        event = parse_event(message["data"])
        if getattr(event, "request_id", None) == request_id and is_final(event):
            if not isinstance(event, CompactionDone):
                raise RuntimeError(f"the job ended {event.type}: {event}")
            return time.time(), event
    raise RuntimeError(f"request {request_id} did not finish within {timeout:g} s")


def floor_once(
    conn: psycopg.Connection[Any],
    client: redis.Redis,
    prefix: str,
    session_id: str,
    work: Workload,
    removed: int | None,
) -> tuple[float, int]:
    """The floor: the visible rows, the summary INSERT and a range UPDATE, one PUBLISH; its
    seconds and the rows the UPDATE marked. ``removed``: the range is that many rows after a
    head of three (the issue's floor); ``None``: all but three rows at each end (step 11's)."""
    started = time.perf_counter()
    rows = floor_load(conn, session_id)
    last = 3 + removed - 1 if removed is not None else len(rows) - 4
    first_seq, last_seq = rows[3][2], rows[last][2]  # a head kept, as the core keeps it
    with conn.transaction(), conn.cursor() as cur:
        cur.execute(
            "INSERT INTO message (session_id, seq, seq_minor, role, content, "
            "is_compaction_summary, created_at) VALUES (%s, %s, 1, 'user', %s, true, now()) "
            "RETURNING id",
            (session_id, last_seq, work.summary),
        )
        row = cur.fetchone()
        assert row is not None
        cur.execute(
            "UPDATE message SET compacted_at = now(), compacted_into_id = %s WHERE session_id = %s "
            "AND seq BETWEEN %s AND %s AND compacted_at IS NULL AND id <> %s",
            (row[0], session_id, first_seq, last_seq, row[0]),
        )
        marked = cur.rowcount
    client.publish(events_channel(prefix), work.done_event)
    return time.perf_counter() - started, marked


def median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


#: The core's phases (``CompactionResult.timings``) in the order they run.
PHASES = ("estimate", "prune", "boundaries", "serialize", "ledger", "summarize", "assemble")
#: The run's own phases besides the core (``benchmarks/timed_worker.py``).
PARTS = ("load", "decide", "core", "llm", "announce", "receipt", "write", "publish", "store")


def report(records: list[Record]) -> None:
    def med(name: str) -> float:
        return median_ms([r.get(name, 0.0) for r in records])

    def of(function: Callable[[Record], float]) -> float:
        return median_ms([function(r) for r in records])

    overhead = of(lambda r: r["total"] - r.get("llm", 0.0))
    without_core = of(lambda r: r["total"] - r.get("llm", 0.0) - r.get("core", 0.0))
    rest = of(lambda r: r["total"] - r["hop"] - sum(r.get(k, 0.0) for k in PARTS))
    floor, wide = med("floor"), med("floor_wide")
    paired = statistics.median((r["total"] - r.get("llm", 0.0)) / r["floor"] for r in records)
    stages = statistics.median(r.get("stages", 0.0) for r in records)
    print(
        f"   end to end (enqueue -> final compaction_done received) {med('total'):6.1f} ms, "
        f"{stages:g} stage(s) a job; auxiliary model {med('llm'):4.2f} ms"
    )
    print(
        f"   overhead (end to end - auxiliary model)        {overhead:6.1f} ms; floor (psycopg "
        f"SELECT + INSERT + UPDATE of the {med('floor_rows') / 1000:g} rows the job compacted, "
        f"one PUBLISH) {floor:5.1f} ms; ratio {overhead / floor:5.2f} (goal <= 2; median of "
        f"each job's own ratio {paired:4.2f})"
    )
    if wide > 0:
        print(
            f"   step 11's floor (the UPDATE's range: all but 3 rows at each end) {wide:5.1f} "
            f"ms; ratio {overhead / wide:5.2f}"
        )
    print(
        f"   old figure (end to end - auxiliary model - core) {without_core:6.1f} ms; "
        f"ratio {without_core / floor:5.2f}"
    )
    phases = [(p, med(f"phase.{p}") - (med("llm") if p == "summarize" else 0.0)) for p in PHASES]
    extra = sorted({k[6:] for r in records for k in r if k.startswith("phase.")} - set(PHASES))
    phases += [(p, med(f"phase.{p}")) for p in extra]
    print("   where the time goes (medians, ms, summed over the stages; parts need not add up):")
    print(
        f"     queue hop {med('hop'):.1f} | load {med('load'):.1f} | decide {med('decide'):.1f} | "
        f"core {med('core'):.1f} | announce {med('announce'):.1f} | "
        f"receipt {med('receipt'):.1f} | write {med('write'):.1f} | "
        f"publishes {med('publish'):.1f} | other store {med('store'):.1f} | rest {rest:.1f} "
        f"(lock, pending key, in-flight record, RQ); of all these, garbage collection "
        f"{med('gc'):.1f}"
    )
    print(
        "     core phases: " + ", ".join(f"{p} {ms:.1f}" for p, ms in phases) + " (the "
        "summarize phase less the model)"
    )
    print(
        f"     after the final done, outside end to end: {med('after_done'):.1f} "
        "(token_update, in-flight record, lock release)"
    )
    details = sorted(
        ((med(k), k.removeprefix("store.")) for k in records[0] if k.startswith("store.")),
        reverse=True,
    )
    statements = sorted(((med(k), k[4:]) for k in records[0] if k.startswith("sql.")), reverse=True)
    if statements:  # --sql: each statement's own time (also in its phase's)
        print(
            "   SQL by statement (median ms): " + ", ".join(f"{n} {ms:.2f}" for ms, n in statements)
        )
    print("   store by call (median ms): " + ", ".join(f"{n} {ms:.1f}" for ms, n in details))
    hops = sorted(r["hop"] * 1000 for r in records)
    print(
        f"   queue hop (enqueue -> job function) median {statistics.median(hops):5.2f} ms, "
        f"max {hops[-1]:5.2f} ms (goal: median <= 10 ms)"
    )
