"""The worker process of ``benchmarks/overhead.py``: the real job on a ``SimpleWorker``, with a
``Runtime`` whose ``client_factory`` answers instantly in-process and timers around each phase
of the run: the load, the decision, each stage of the core (and its own phases), the announce,
the receipt, the write, the publishes, every other store call (and, with ``SQL_TIMERS`` set,
each SQL statement). Each job pushes its timings to ``timings_key(prefix)``.
"""

from __future__ import annotations

import gc
import json
import os
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from rq import SimpleWorker
from rq.serializers import JSONSerializer
from sqlalchemy import event

import compaction.worker.jobs as jobs
import compaction.worker.pipeline as pipeline
from benchmarks.engine import SUMMARY
from compaction import CompactionResult
from compaction.core.contract import is_final
from compaction.service.redis import redis_client
from compaction.service.settings import Settings
from compaction.store import Store
from compaction.worker.llm import Completion
from compaction.worker.runtime import Runtime, install

T = TypeVar("T")
R = TypeVar("R", bound=CompactionResult)


def timings_key(prefix: str) -> str:
    """Under the namespace's prefix, so clearing the namespace deletes it."""
    return f"{prefix}:bench:timings"


class Timers:
    """Exclusive seconds per component for the job being run (reset when a job starts): time
    spent in a nested measured call (the store read that resolves the channel, the LLM, both
    inside ``compact()``) counts for the inner component only. What runs once the request's
    final event is published (``token_update``, the lock's release) counts as ``after_done``:
    it is not in the end to end figure."""

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
        if self.done:
            name, detail = "after_done", None
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

    def staged(self, call: Callable[..., R]) -> Callable[..., R]:
        """A stage of the core (``compact``, ``loop_stage``): its time as ``core``, its phases
        (``CompactionResult.timings``) added up over the request's stages as ``phase.<name>``."""

        def wrapper(*args: Any, **kwargs: Any) -> R:
            with self.measure("core"):
                result = call(*args, **kwargs)
            for phase, seconds in result.timings.items():
                self.seconds[f"phase.{phase}"] += seconds
            self.seconds["stages"] += 1
            return result

        return wrapper


class InstantClient:
    """A ``ChatClient`` that answers at once, without I/O."""

    provider = "fake"

    def __init__(self, model: str, timers: Timers) -> None:
        self.model = model
        self.timers = timers

    def complete(self, prompt: str, max_tokens: int) -> Completion:
        with self.timers.measure("llm"):
            return Completion(SUMMARY, len(prompt) // 4, len(SUMMARY) // 4)


#: The phase each ``Store`` call counts under; any other call is ``store``.
STORE_PHASES = {
    "get_session": "load",
    "get_agent": "load",
    "load_history": "load",
    "append_event": "announce",
    "apply_compaction": "write",
}


class TimedStore:
    """Every call to the wrapped ``Store`` counts under its phase, and as ``store.<call>``."""

    def __init__(self, inner: Store, timers: Timers) -> None:
        self._inner = inner
        self._timers = timers

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._inner, name)
        if not callable(attribute):
            return attribute
        phase = STORE_PHASES.get(name, "store")
        return self._timers.timed(phase, attribute, f"store.{name}")


#: set (by ``python -m benchmarks.worker --sql``): each SQL statement's time, as ``sql.<label>``
SQL_TIMERS = "COMPACTION_BENCH_SQL"


def statement_label(statement: str) -> str:
    """A statement's kind, its table and what it sets or inserts first: ``UPDATE message SET
    compacted_at``, ``INSERT INTO message (event)`` (a row with metadata), ``WITH reserved``."""
    words = statement.split()
    label = " ".join(words[:4]).split("=")[0].split("(")[0].strip()
    if words[:3] == ["INSERT", "INTO", "message"]:
        label += " (event)" if "metadata" in statement.split(")")[0] else " (summary)"
    return label


def time_statements(store: Store, timers: Timers) -> None:
    """Each statement the store's engine runs, timed on its own (``sql.<label>``); not nested
    in the timers' phases: a statement's time is also its phase's."""
    engine = store.factory.kw["bind"]
    started: list[float] = []

    @event.listens_for(engine, "before_cursor_execute")
    def _before(*_: Any) -> None:
        started.append(time.perf_counter())

    @event.listens_for(engine, "after_cursor_execute")
    def _after(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        seconds = time.perf_counter() - started.pop()
        if not timers.done:  # as the phases: what runs after the final event is apart
            timers.seconds[f"sql.{statement_label(statement)}"] += seconds


def time_collections(timers: Timers) -> None:
    """The garbage collector's pauses during the job, as ``gc`` (also inside their phases): a
    collection that falls in the load or the core shows there as that phase's own time."""
    started: list[float] = []

    def callback(phase: str, _info: dict[str, Any]) -> None:
        if phase == "start":
            started.append(time.perf_counter())
        elif started and not timers.done:
            timers.seconds["gc"] += time.perf_counter() - started.pop()
        else:
            started.clear()

    gc.callbacks.append(callback)


def instrument(timers: Timers) -> Runtime:
    """The runtime from the environment's settings, with the instant client and the timers
    around the store (the session contexts' reads too), the publisher, each phase of the
    pipeline and each stage of the core."""
    runtime = Runtime.from_settings(Settings())
    runtime.client_factory = lambda channel: InstantClient(channel.model, timers)
    if os.environ.get(SQL_TIMERS):
        time_statements(runtime.store, timers)
    time_collections(timers)
    runtime.store = TimedStore(runtime.store, timers)  # type: ignore[assignment]
    runtime.contexts.store = runtime.store
    publish = runtime.publisher.publish

    def timed_publish(event: Any) -> bool:
        with timers.measure("publish"):
            sent = publish(event)
        timers.done = timers.done or is_final(event)
        return sent

    runtime.publisher.publish = timed_publish  # type: ignore[method-assign]
    # the names the pipeline calls them by
    for name, phase in (("load", "load"), ("reload", "load"), ("early_stop", "decide")):
        setattr(pipeline, name, timers.timed(phase, getattr(pipeline, name)))
    pipeline.compact = timers.staged(pipeline.compact)  # type: ignore[attr-defined]
    pipeline.loop_stage = timers.staged(pipeline.loop_stage)  # type: ignore[attr-defined]
    # the stage's receipt (issue 23): counted on the stage's input before the write
    pipeline.receipts.stage_receipt = timers.timed(  # type: ignore[attr-defined]
        "receipt",
        pipeline.receipts.stage_receipt,  # type: ignore[attr-defined]
    )
    pipeline.compaction_write = timers.timed(  # type: ignore[attr-defined]
        "write",
        pipeline.compaction_write,  # type: ignore[attr-defined]
        "store.compaction_write",
    )
    return runtime


def main() -> None:
    """The worker (its own process; settings from the environment)."""
    timers = Timers()
    runtime = instrument(timers)
    settings = runtime.settings
    key = timings_key(settings.channel_prefix)
    entry = jobs.compaction_requested

    def compaction_requested(payload: dict[str, Any]) -> dict[str, Any]:
        timers.reset()
        started_at, started = time.time(), time.perf_counter()
        result = entry(payload)
        record: dict[str, Any] = {**timers.seconds, "job": time.perf_counter() - started}
        record.update(start=started_at, request=payload.get("requestId"))
        runtime.redis.rpush(key, json.dumps(record))
        return result

    jobs.compaction_requested = compaction_requested  # RQ looks the function up by name
    install(runtime)
    gc.freeze()  # as ``compaction worker`` does once started (cli/worker.py)
    connection = redis_client(settings.redis_url)
    SimpleWorker([settings.queue_name], connection=connection, serializer=JSONSerializer).work(
        logging_level="WARNING"
    )


if __name__ == "__main__":
    main()
