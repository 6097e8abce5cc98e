"""The embedded stack (docs/architecture.md, "Layers", "The gateway"): the whole product in one
process, on services that need no server: a migrated SQLite file, an in-process Redis
(fakeredis), the producers, the event publisher and an RQ worker on a thread. The embedded
gateway runs on it, and so does ``compaction.testing`` for an adopter's tests.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import fakeredis
import redis
from rq import SimpleWorker
from rq.timeouts import TimerDeathPenalty

from compaction.producers.context import Producers
from compaction.service.events import EventPublisher
from compaction.service.settings import Settings
from compaction.store import Store, make_sessionmaker
from compaction.store.db import make_engine
from compaction.store.migrate import upgrade
from compaction.worker import runtime
from compaction.worker.rq_guard import WORKER_OPTIONS
from compaction.worker.runtime import ClientFactory

#: how long the thread worker waits on an empty queue before it looks whether it should stop
POLL_S = 1


class ThreadWorker(SimpleWorker):
    """RQ's ``SimpleWorker`` off the main thread: signals belong to the main thread (uvicorn
    handles them), so it installs no handler and times jobs out with a timer, not SIGALRM."""

    death_penalty_class = TimerDeathPenalty

    def _install_signal_handlers(self) -> None:
        pass


class InProcessWorker:
    """A worker thread on the embedded queue, running jobs as ``compaction worker`` does
    (``WORKER_OPTIONS``: the JSON serializer and the job guard).

    RQ looks at a stop request only between jobs, never while it waits on an empty queue: so
    each RQ worker quits after ``POLL_S`` idle and the thread starts a fresh one until told to
    stop (a blocking wait meanwhile, so a job starts as soon as it is queued)."""

    def __init__(self, client: redis.Redis, queue_name: str) -> None:
        self.client = client
        self.queue_name = queue_name
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._work, name="compaction-worker", daemon=True)

    def _work(self) -> None:
        while not self.stopping.is_set():
            worker = ThreadWorker([self.queue_name], connection=self.client, **WORKER_OPTIONS)
            worker.work(max_idle_time=POLL_S, logging_level="WARNING")

    def start(self) -> None:
        self.thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Ends the loop after the job at hand."""
        self.stopping.set()
        self.thread.join(timeout)


@dataclass
class Stack:
    """The embedded services and what a gateway or a test calls on them."""

    settings: Settings
    store: Store
    #: the in-process Redis server: ``fakeredis.aioredis.FakeRedis(server=...)`` shares it
    server: fakeredis.FakeServer
    redis: fakeredis.FakeRedis
    producers: Producers
    publisher: EventPublisher

    def work(self) -> None:
        """Runs every queued job in the calling thread, jobs queued meanwhile included, then
        returns (RQ's burst mode): a test's deterministic alternative to the worker thread."""
        worker = ThreadWorker([self.settings.queue_name], connection=self.redis, **WORKER_OPTIONS)
        worker.work(burst=True, logging_level="WARNING")


@contextmanager
def running(
    settings: Settings,
    *,
    client_factory: ClientFactory | None = None,
    thread: bool = True,
    offline_without_channel: bool = False,
) -> Iterator[Stack]:
    """The stack on ``settings.database_url`` (migrated here) and a fresh in-process Redis;
    the worker's runtime installed (its auxiliary clients from ``client_factory`` when given;
    with ``offline_without_channel``, the offline summarizer while no channel is configured)
    and, with ``thread``, a worker thread running; all of it stopped when the block ends."""
    upgrade(settings.database_url)
    engine = make_engine(settings.database_url)
    store = Store(make_sessionmaker(engine))
    server = fakeredis.FakeServer()
    client = fakeredis.FakeRedis(server=server)
    publisher = EventPublisher(
        client, prefix=settings.channel_prefix, stream_maxlen=settings.events_stream_maxlen
    )
    runtime.install(
        runtime.Runtime(
            settings=settings,
            store=store,
            redis=client,
            publisher=publisher,
            client_factory=client_factory,
            offline_without_channel=offline_without_channel,
        )
    )
    worker = InProcessWorker(client, settings.queue_name) if thread else None
    try:
        if worker is not None:
            worker.start()
        yield Stack(
            settings=settings,
            store=store,
            server=server,
            redis=client,
            producers=Producers(settings=settings, store=store, redis=client),
            publisher=publisher,
        )
    finally:
        if worker is not None:
            worker.stop()
        runtime.install(None)
        engine.dispose()
