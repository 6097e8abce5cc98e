"""Benchmark of the store on PostgreSQL against a plain-psycopg floor (DESIGN §5).

    python -m benchmarks.store [--sizes 1000,10000] [--repeat N]

For sessions of each size: times ``Store.load_history(session, "compacted")`` and
``Store.apply_compaction(write)`` (the write the core plans on the loaded view, computed before
the clock starts; every repeat compacts a fresh session), and the same work done by hand with
psycopg in the same run: the same SELECT of the visible rows ordered by ``seq``, and one
transaction that bumps the session's version where it is still the expected one (the UPDATE
locks the row), inserts the summary, marks the middle with one range UPDATE, inserts the run
with its counts, and marks the tail's pruned rows when the plan has any. Prints per size the
store's ms, the floor's ms and their ratio (goal: <= 2), medians of ``--repeat`` runs; nothing
is asserted.

The database is ``COMPACTION_BENCH_POSTGRES_URL``, or a throwaway one created next to
``COMPACTION_TEST_POSTGRES_URL`` (default ``postgresql://127.0.0.1:5432/test``) and dropped at
the end.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import psycopg
from psycopg.types.json import Json
from sqlalchemy.engine import make_url

from benchmarks.engine import InstantSummarizer, synthetic
from compaction import CompactionConfig, compact
from compaction.messages import Message
from store import (
    CompactionWrite,
    RunOrigin,
    Store,
    compaction_write,
    make_engine,
    make_sessionmaker,
)
from store.migrate import upgrade
from store.records import EVENT_TYPE

ADMIN_URL = os.environ.get("COMPACTION_TEST_POSTGRES_URL", "postgresql://127.0.0.1:5432/test")
T = TypeVar("T")

NOT_EVENT = (
    "(metadata IS NULL OR metadata->>'systemType' IS NULL "
    f"OR metadata->>'systemType' <> '{EVENT_TYPE}')"
)
VISIBLE = (
    "SELECT id, session_id, seq, seq_minor, role, content, tool_calls, tool_call_id, metadata, "
    "created_at, compacted_at, compacted_into_id, is_compaction_summary, pruned_at, "
    "pruned_run_id FROM message WHERE session_id = %s AND compacted_at IS NULL "
    f"AND {NOT_EVENT} ORDER BY seq, seq_minor"
)


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
        admin.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
    try:
        yield f"{ADMIN_URL.rsplit('/', 1)[0]}/{name}"
    finally:
        with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')  # type: ignore[arg-type]


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


def floor_load(conn: psycopg.Connection[Any], session_id: str) -> list[tuple[Any, ...]]:
    return conn.execute(VISIBLE, (session_id,)).fetchall()


def floor_apply(conn: psycopg.Connection[Any], plan: CompactionWrite) -> int:
    """What ``Store.apply_compaction`` writes, by hand; returns the rows marked compacted."""
    origin, summary = plan.origin, plan.summary
    assert summary is not None, "the benchmark's writes always summarize"
    with conn.transaction(), conn.cursor() as cur:
        cur.execute(
            "UPDATE chat_session SET compaction_version = compaction_version + 1 "
            "WHERE id = %s AND compaction_version = %s RETURNING compaction_version",
            (origin.session_id, plan.expected_version),
        )
        row = cur.fetchone()
        if row is None:
            raise RuntimeError("the floor's session moved")
        version = row[0]
        now = time.time()
        cur.execute(
            "INSERT INTO message (session_id, seq, seq_minor, role, content, "
            "is_compaction_summary, created_at) VALUES (%s, %s, %s, 'user', %s, true, "
            "to_timestamp(%s)) RETURNING id",
            (origin.session_id, summary.last_seq, version, summary.text, now),
        )
        summary_id = one(cur.fetchone())
        cur.execute(
            "UPDATE message SET compacted_at = to_timestamp(%s), compacted_into_id = %s "
            "WHERE session_id = %s AND seq BETWEEN %s AND %s AND compacted_at IS NULL "
            f"AND id <> %s AND {NOT_EVENT}",
            (now, summary_id, origin.session_id, summary.first_seq, summary.last_seq, summary_id),
        )
        removed = cur.rowcount
        run_id = floor_run(cur, plan, removed, summary_id, version, now)
        if plan.pruned_ids:
            cur.execute(
                "UPDATE message SET pruned_at = to_timestamp(%s), pruned_run_id = %s "
                "WHERE session_id = %s AND id = ANY(%s) AND role = 'tool' "
                "AND compacted_at IS NULL AND pruned_at IS NULL AND seq > %s",
                (now, run_id, origin.session_id, list(plan.pruned_ids), summary.last_seq),
            )
        return removed


def floor_run(
    cur: psycopg.Cursor[Any],
    plan: CompactionWrite,
    removed: int,
    summary_id: int,
    version: int,
    now: float,
) -> int:
    """The floor's run row; its id."""
    origin = plan.origin
    cur.execute(
        "INSERT INTO compaction_run (session_id, request_id, reason, status, language, "
        "tokens_before, tokens_after, removed_count, pruned_count, summary_message_id, "
        "compaction_version, model, input_tokens, output_tokens, durations, worker, "
        "started_at, finished_at) VALUES (%s, %s, %s, 'succeeded', %s, %s, %s, %s, %s, %s, "
        "%s, %s, %s, %s, %s, %s, %s, to_timestamp(%s)) RETURNING id",
        (
            origin.session_id,
            origin.request_id,
            origin.reason,
            plan.language,
            plan.tokens_before,
            plan.tokens_after,
            removed,
            len(set(plan.pruned_ids)),
            summary_id,
            version,
            plan.model,
            plan.input_tokens,
            plan.output_tokens,
            Json(plan.durations) if plan.durations else None,
            origin.worker,
            origin.started_at,
            now,
        ),
    )
    return one(cur.fetchone())


def one(row: tuple[Any, ...] | None) -> Any:
    assert row is not None
    return row[0]


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
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    print(f"$ python -m benchmarks.store {' '.join(argv or sys.argv[1:])}".rstrip())
    with migrated_store() as (url, store), psycopg.connect(libpq_url(url), autocommit=True) as conn:
        server = one(conn.execute("SHOW server_version").fetchone())
        print(
            f"python {platform.python_version()} on {platform.machine()}, "
            f"PostgreSQL {server.split()[0]} at {make_url(url).host}, "
            f"median of {args.repeat}"
        )
        run(store, conn, sizes, args.repeat)
    return 0


def run(store: Store, conn: psycopg.Connection[Any], sizes: list[int], repeat: int) -> None:
    # warm-up: compiled statements, pooled connections, prepared statements on both sides
    warm = fresh_sessions(store, 1_000, 6)
    for session_id in warm:
        store.load_history(session_id, "compacted")
        floor_load(conn, session_id)
    for first, second in zip(warm[::2], warm[1::2], strict=True):
        store.apply_compaction(plan_for(store, first))
        floor_apply(conn, plan_for(store, second))

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
                floor_ms, rows = timed(lambda s=ours: floor_load(conn, s))
                store_ms, view = timed(lambda s=ours: store.load_history(s, "compacted"))
            else:
                store_ms, view = timed(lambda s=ours: store.load_history(s, "compacted"))
                floor_ms, rows = timed(lambda s=ours: floor_load(conn, s))
            loads.append((store_ms, floor_ms))
            visible = len(view) if len(view) == len(rows) else -1

            our_plan, their_plan = plan_for(store, ours), plan_for(store, theirs)
            if index % 2:
                floor_ms, floor_removed = timed(lambda p=their_plan: floor_apply(conn, p))
                store_ms, applied = timed(lambda p=our_plan: store.apply_compaction(p))
            else:
                store_ms, applied = timed(lambda p=our_plan: store.apply_compaction(p))
                floor_ms, floor_removed = timed(lambda p=their_plan: floor_apply(conn, p))
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
