"""Benchmark of the store on PostgreSQL against a plain-psycopg floor (DESIGN §5).

    python -m benchmarks.store [--sizes 1000,10000] [--repeat N] [--gc-freeze]

For sessions of each size: times ``Store.load_history(session, "compacted")`` and
``Store.apply_compaction(write)`` (the write the core plans on the loaded view, computed before
the clock starts; every repeat compacts a fresh session), and the same work done by hand with
psycopg in the same run: the same SELECT of the visible rows ordered by ``seq``, and one
transaction that bumps the session's version where it is still the expected one (the UPDATE
locks the row), inserts the summary, marks the middle with one range UPDATE, inserts the run
with its counts, and marks the tail's pruned rows when the plan has any. Prints per size the
store's ms, the floor's ms and their ratio (goal: <= 2), medians of ``--repeat`` runs; nothing
is asserted.

The store does not pause the garbage collector: a full collection that falls inside a 10,000-row
load walks every object the process holds (this benchmark's, about 100,000), which doubles that
load. ``compaction worker`` moves its start-up objects out of the collector's way with
``gc.freeze()`` (cli/worker.py); ``--gc-freeze`` does the same here after the warm-up.

The database is ``COMPACTION_BENCH_POSTGRES_URL``, or a throwaway one created next to
``COMPACTION_TEST_POSTGRES_URL`` (default ``postgresql://127.0.0.1:5432/test``) and dropped at
the end.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any, TypeVar

import psycopg
from sqlalchemy.engine import make_url

from benchmarks.engine import InstantSummarizer, synthetic
from benchmarks.floor import floor_apply, floor_load, one
from compaction import CompactionConfig, compact
from compaction.core.messages import Message
from compaction.store import (
    CompactionWrite,
    RunOrigin,
    Store,
    compaction_write,
    make_engine,
    make_sessionmaker,
)
from compaction.store.migrate import upgrade

ADMIN_URL = os.environ.get("COMPACTION_TEST_POSTGRES_URL", "postgresql://127.0.0.1:5432/test")
T = TypeVar("T")


def libpq_url(url: str) -> str:
    """A SQLAlchemy URL (``postgresql+psycopg://``) as psycopg wants it."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


@contextmanager
def database() -> Iterator[str]:
    given = os.environ.get("COMPACTION_BENCH_POSTGRES_URL")
    if given:
        yield given
        return
    name = f"compaction_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{ADMIN_URL.rsplit('/', 1)[0]}/{name}"
    finally:
        with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def migrated_store() -> Iterator[tuple[str, Store]]:
    """The benchmark's database, migrated, and a store on it (the worker benchmark's too)."""
    with database() as url:
        upgrade(url)
        engine = make_engine(url)
        try:
            yield url, Store(make_sessionmaker(engine))
        finally:
            engine.dispose()


def timed(call: Callable[[], T]) -> tuple[float, T]:
    started = time.perf_counter()
    result = call()
    return (time.perf_counter() - started) * 1000, result


def plan_for(store: Store, session_id: str) -> CompactionWrite:
    """The write the core plans on the session's loaded compacted view (not timed)."""
    view = store.load_history(session_id, "compacted")
    result = compact(
        [s.message for s in view], CompactionConfig(), InstantSummarizer(), reason="manual"
    )
    version = store.get_session(session_id).compaction_version
    return compaction_write(view, result, RunOrigin(session_id=session_id), version)


def sessions(store: Store, messages: list[Message], count: int) -> list[str]:
    """``count`` new sessions, each holding ``messages``."""
    out = []
    for _ in range(count):
        session_id = store.create_session()
        store.append_messages(session_id, messages)
        out.append(session_id)
    return out


def fresh_sessions(store: Store, size: int, count: int) -> list[str]:
    return sessions(store, synthetic(size), count)


def ratio(store_ms: float, floor_ms: float) -> str:
    return f"{store_ms / floor_ms:6.2f}" if floor_ms > 0 else "   n/a"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--gc-freeze",
        action="store_true",
        help="gc.freeze() after the warm-up, as compaction worker does after start-up",
    )
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    print(f"$ python -m benchmarks.store {' '.join(argv or sys.argv[1:])}".rstrip())
    with migrated_store() as (url, store), psycopg.connect(libpq_url(url), autocommit=True) as conn:
        server = one(conn.execute("SHOW server_version").fetchone())
        print(
            f"python {platform.python_version()} on {platform.machine()}, "
            f"PostgreSQL {server.split()[0]} at {make_url(url).host}, "
            f"median of {args.repeat}{', gc frozen after the warm-up' if args.gc_freeze else ''}"
        )
        warm_up(store, conn)
        if args.gc_freeze:
            gc.freeze()
        run(store, conn, sizes, args.repeat)
    return 0


def warm_up(store: Store, conn: psycopg.Connection[Any]) -> None:
    """Compiled statements, pooled connections, prepared statements on both sides."""
    warm = fresh_sessions(store, 1_000, 6)
    for session_id in warm:
        store.load_history(session_id, "compacted")
        floor_load(conn, session_id)
    for first, second in zip(warm[::2], warm[1::2], strict=True):
        store.apply_compaction(plan_for(store, first))
        floor_apply(conn, plan_for(store, second))


def run(store: Store, conn: psycopg.Connection[Any], sizes: list[int], repeat: int) -> None:
    print(
        f"{'msgs':>7} {'visible':>7} {'removed':>7} {'pruned':>6} | "
        f"{'load store':>10} {'floor':>7} {'ratio':>6} | "
        f"{'apply store':>11} {'floor':>7} {'ratio':>6}   (ms; goal: ratio <= 2)"
    )
    for size in sizes:
        sessions = fresh_sessions(store, size, 2 * repeat)
        conn.execute("ANALYZE message")
        conn.execute("ANALYZE chat_session")
        loads: list[tuple[float, float]] = []
        applies: list[tuple[float, float]] = []
        visible = removed = pruned = 0
        for index in range(repeat):
            ours, theirs = sessions[2 * index], sessions[2 * index + 1]
            # alternate who goes first, so that neither always meets a warmer cache
            if index % 2:
                floor_ms, rows = timed(partial(floor_load, conn, ours))
                store_ms, view = timed(partial(store.load_history, ours, "compacted"))
            else:
                store_ms, view = timed(partial(store.load_history, ours, "compacted"))
                floor_ms, rows = timed(partial(floor_load, conn, ours))
            loads.append((store_ms, floor_ms))
            visible = len(view) if len(view) == len(rows) else -1

            our_plan, their_plan = plan_for(store, ours), plan_for(store, theirs)
            if index % 2:
                floor_ms, floor_removed = timed(partial(floor_apply, conn, their_plan))
                store_ms, applied = timed(partial(store.apply_compaction, our_plan))
            else:
                store_ms, applied = timed(partial(store.apply_compaction, our_plan))
                floor_ms, floor_removed = timed(partial(floor_apply, conn, their_plan))
            applies.append((store_ms, floor_ms))
            removed = applied.removed_count if applied.removed_count == floor_removed else -1
            pruned = applied.pruned_count
        load_store = statistics.median(s for s, _ in loads)
        load_floor = statistics.median(f for _, f in loads)
        apply_store = statistics.median(s for s, _ in applies)
        apply_floor = statistics.median(f for _, f in applies)
        print(
            f"{size:7d} {visible:7d} {removed:7d} {pruned:6d} | "
            f"{load_store:10.1f} {load_floor:7.1f} {ratio(load_store, load_floor)} | "
            f"{apply_store:11.1f} {apply_floor:7.1f} {ratio(apply_store, apply_floor)}"
        )


if __name__ == "__main__":
    raise SystemExit(main())
