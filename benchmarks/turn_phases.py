"""Where a gateway turn's time goes (part of ``python -m benchmarks.gateway``;
docs/benchmarks.md, "Overheads").

The turn ``POST /api/sessions/{id}/messages`` runs (``gateway.chat.Turns.take``), in this
process, on the benchmark's database, namespace and fake model: the same ``Resources`` a
gateway builds, with timers around each step. A step's time is its own (a store call inside
``ensure_compacted`` counts for the store only); "the rest" is the turn less every timed step:
the thread hops (each synchronous step runs in a thread), the event loop and the glue. The
HTTP round trip less this turn is what uvicorn, the routing, the auth and the answer's
serialization add.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import compaction.producers.tokens as tokens
import compaction.producers.trigger as trigger
from compaction.gateway.chat_model import ChatModel
from compaction.gateway.resources import Resources
from compaction.producers import Producers
from compaction.service.settings import Settings
from tests.namespace import RedisNamespace

#: store calls timed one by one (``store.<name>``)
STORE_CALLS = (
    "get_session",
    "get_agent",
    "append_messages",
    "append_positioned",
    "load_history",
    "record_token_stat",
    "compaction_counts",
    "token_stats",
    "recent_token_stats",
    "list_channels",
)


class Timers:
    """Exclusive seconds per step of the turn being run; a nested step's time counts for it
    only. Steps may run in threads, one at a time (a turn is sequential)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self.nested: list[float] = []

    @contextmanager
    def measure(self, name: str) -> Iterator[None]:
        self.nested.append(0.0)
        started = time.perf_counter()
        try:
            yield
        finally:
            elapsed = time.perf_counter() - started
            inner = self.nested.pop()
            self.seconds[name] += elapsed - inner
            self.calls[name] += 1
            if self.nested:
                self.nested[-1] += elapsed

    def sync(self, name: str, call: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.measure(name):
                return call(*args, **kwargs)

        return wrapper

    def aio(self, name: str, call: Callable[..., Awaitable[Any]]) -> Callable[..., Any]:
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.measure(name):
                return await call(*args, **kwargs)

        return wrapper


def instrument(resources: Resources, timers: Timers) -> None:
    """Timers around the turn's steps: the store's calls, the pre-call check's pieces, the
    chat model, the publishes, the token_update and the turn's record."""
    ctx = resources.producers
    for name in STORE_CALLS:
        if hasattr(ctx.store, name):
            setattr(ctx.store, name, timers.sync(f"store.{name}", getattr(ctx.store, name)))
    ctx.contexts.resolve = timers.sync("resolve", ctx.contexts.resolve)  # type: ignore[method-assign]
    trigger.used_tokens = timers.sync("used_tokens", trigger.used_tokens)
    for name in ("check_and_enqueue", "record_turn", "publish_token_update"):
        setattr(ctx, name, timers.sync(name, getattr(ctx, name)))
    # the token_update's pieces (producers/tokens.py, by the names it calls them)
    tokens.used_tokens = timers.sync("used_tokens", tokens.used_tokens)  # type: ignore[attr-defined]
    tokens.session_warning = timers.sync("gate warning", tokens.session_warning)  # type: ignore[attr-defined]
    tokens.remember_usage = timers.sync("remember_usage", tokens.remember_usage)  # type: ignore[attr-defined]
    tokens.EventPublisher = _timed_publisher(timers)  # type: ignore[attr-defined]
    resources.hub.share = timers.sync("hub.share", resources.hub.share)  # type: ignore[method-assign]
    resources.turns.aio = ctx.aio()  # the twin of the instrumented producers
    models = resources.turns.models
    for_session = models.for_session

    def timed_model(agent: Any, model: str | None) -> ChatModel:
        chat = for_session(agent, model)
        chat.reply = timers.aio("chat model", chat.reply)  # type: ignore[method-assign]
        return chat

    models.for_session = timers.sync("chat choice", timed_model)  # type: ignore[method-assign]


def _timed_publisher(timers: Timers) -> Any:
    publisher = tokens.EventPublisher  # type: ignore[attr-defined]

    class Timed(publisher):  # type: ignore[misc, valid-type]
        def publish(self, event: Any) -> bool:
            with timers.measure("publish"):
                return bool(super().publish(event))

    return Timed


async def measured(
    resources: Resources, timers: Timers, sessions: list[str], turns: int
) -> list[dict[str, float]]:
    records = []
    async with resources.running():
        for n in range(turns):
            timers.seconds.clear()
            timers.calls.clear()
            started = time.perf_counter()
            await resources.turns.take(sessions[n % len(sessions)], f"p{n}")
            record = dict(timers.seconds, total=time.perf_counter() - started)
            if n >= len(sessions):  # each session's first turn warms its caches
                records.append(record)
    return records


def turn_phases(url: str, namespace: RedisNamespace, sessions: list[str], turns: int) -> None:
    """Print the median of each step over ``turns`` in-process turns."""
    os.environ.update({"COMPACTION_DATABASE_URL": url, **namespace.env()})
    settings = Settings()
    resources = Resources(settings, Producers.from_settings(settings))
    timers = Timers()
    instrument(resources, timers)
    records = asyncio.run(measured(resources, timers, sessions, turns))
    med = {k: statistics.median(r.get(k, 0.0) for r in records) * 1000 for r in records for k in r}
    rest = statistics.median(
        r["total"] - sum(v for k, v in r.items() if k != "total") for r in records
    )
    print(f"\nwhere an in-process turn's time goes (median ms of {len(records)} turns):")
    print(
        f"  the turn, in process {med['total']:6.2f} ms (the HTTP turn less this: the HTTP layer)"
    )
    steps = sorted(((ms, k) for k, ms in med.items() if k != "total"), reverse=True)
    calls = timers.calls  # the last turn's: every turn makes the same calls
    print("  " + " | ".join(f"{k} {ms:.2f} ({calls[k]}x)" for ms, k in steps))
    print(f"  rest (thread hops, event loop, glue) {rest * 1000:.2f}")
