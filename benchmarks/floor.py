"""The plain-psycopg floor the store is measured against (``benchmarks/store.py``; part 1 of
``benchmarks/worker.py`` reads the same visible rows): the statements the store runs, by hand.
"""

from __future__ import annotations

import time
from typing import Any

import psycopg
from psycopg.types.json import Json

from compaction.store import CompactionWrite
from compaction.store.records import EVENT_TYPE

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
    return int(one(cur.fetchone()))


def one(row: tuple[Any, ...] | None) -> Any:
    assert row is not None
    return row[0]
