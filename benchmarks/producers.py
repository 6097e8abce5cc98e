"""Benchmark of the per-turn threshold check (issue "4 of 5").

    python -m benchmarks.producers [--messages 2000] [--calls 200]

A 2,000-message session (a real transcript, repeated) on PostgreSQL and Redis (a namespace of
its own on the shared Redis, ``tests/namespace.py``); the check is called once per turn
with nothing changed since the last call, in both ways a gateway can call it (passing the
messages it is about to send, or letting the store be read), against a full re-estimate of the
same messages. Prints the median and p95 per call; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path

from benchmarks.processes import REDIS_URL
from benchmarks.store import database
from compaction import estimate_messages_tokens
from compaction.core.messages import Message, messages_from_dicts
from compaction.producers import trigger
from compaction.producers.context import Producers
from compaction.producers.trigger import TriggerResult
from compaction.service.settings import Settings
from compaction.store import Store, make_sessionmaker
from compaction.store.migrate import upgrade
from tests.namespace import RedisNamespace, scoped

TRANSCRIPT = (
    Path(__file__).resolve().parent.parent
    / "tests"
    / "data"
    / "transcripts"
    / "msa_deepseek-chat_marshmallow-1343.json"
)


def messages(count: int) -> list[Message]:
    base = messages_from_dicts(json.loads(TRANSCRIPT.read_text(encoding="utf-8")))
    out: list[Message] = []
    copy = 0
    while len(out) < count:  # repeat the transcript, keeping tool call ids unique
        for m in base:
            calls = [replace(c, id=f"{c.id}-{copy}") for c in m.tool_calls]
            call_id = f"{m.tool_call_id}-{copy}" if m.tool_call_id else None
            out.append(replace(m, tool_calls=calls, tool_call_id=call_id))
        copy += 1
    while out[count - 1].role == "assistant" and out[count - 1].tool_calls:
        count -= 1
    return out[:count]


def timed(call: Callable[[], object], repeat: int) -> tuple[float, float]:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.95) - 1]


def cold_check(ctx: Producers, session_id: str) -> TriggerResult:
    """The check after the remembered estimate is forgotten: the whole history is loaded."""
    ctx.estimates.forget(session_id)
    return trigger.check_and_enqueue(ctx, session_id)


def window_rows(
    store: Store, url: str, window: int, session_id: str, conversation: list[Message], calls: int
) -> None:
    """The check's figures with this context window, in a Redis namespace of its own (so no
    request or estimate is left from another window)."""
    namespace = RedisNamespace.fresh(REDIS_URL, tag="bench")
    with scoped(namespace) as client:
        settings = Settings(database_url=url, context_window=window, **namespace.settings())
        ctx = Producers(settings=settings, store=store, redis=client)
        estimate = settings.compaction_config().estimator()
        first = trigger.check_and_enqueue(ctx, session_id, messages=conversation)
        print(
            f"\nsession: {len(conversation)} messages, ~{first.used_tokens:,} tokens, "
            f"window {window:,}: {first.status}; {calls} calls each"
        )
        print(f"{'':50} {'median ms':>10} {'p95 ms':>8}")
        rows: list[tuple[str, Callable[[], object]]] = [
            (
                "full re-estimate of the messages (no cache)",
                partial(estimate_messages_tokens, conversation, estimate),
            ),
            (
                "check, messages passed, unchanged",
                partial(trigger.check_and_enqueue, ctx, session_id, messages=conversation),
            ),
            ("check, store read, unchanged", partial(trigger.check_and_enqueue, ctx, session_id)),
            (
                "check, store read, cold (whole history loaded)",
                partial(cold_check, ctx, session_id),
            ),
        ]
        for label, call in rows:
            median, p95 = timed(call, calls)
            print(f"{label:50} {median:10.3f} {p95:8.3f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="per-turn threshold check")
    parser.add_argument("--messages", type=int, default=2_000)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args(argv)
    print(f"$ python -m benchmarks.producers {' '.join(argv or sys.argv[1:])}".rstrip())
    with database() as url:
        upgrade(url)
        store = Store(make_sessionmaker(url))
        conversation = messages(args.messages)
        session_id = store.create_session()
        store.append_messages(session_id, conversation)
        # The everyday case (under the threshold), then one over it with its request queued.
        for window in (1_000_000, 200_000):
            window_rows(store, url, window, session_id, conversation, args.calls)
        print("goal: an unchanged session's check <= 1 ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
