"""The embedded gateway (docs/architecture.md, "The gateway"): with neither
``COMPACTION_DATABASE_URL`` nor ``COMPACTION_REDIS_URL`` configured, the whole product runs in
the gateway's process on the defaults ``compaction demo`` uses: a migrated SQLite file in a
temporary folder, an in-process Redis (fakeredis), an in-process worker, the offline
summarizer and an offline chat model (until channels are added), and the bundled transcripts
already imported so the console has something to show.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fakeredis
import fakeredis.aioredis
import redis
from rq import SimpleWorker
from rq.timeouts import TimerDeathPenalty

from compaction.core.messages import Message
from compaction.gateway.chat_model import OfflineChatModel
from compaction.gateway.resources import GatewayOptions, Resources
from compaction.producers.context import Producers
from compaction.service.events import EventPublisher
from compaction.service.settings import Settings
from compaction.store import Store, make_sessionmaker
from compaction.store.migrate import upgrade
from compaction.worker import runtime
from compaction.worker.rq_guard import WORKER_OPTIONS

#: the bundled sessions' agent: a window small enough that a bundled transcript (about 28,000
#: tokens) is past the threshold, so the first message compacts it (and /compact has work)
AGENT_ID = "demo"
CONTEXT_WINDOW = 32_000
#: how long the worker waits on an empty queue before it looks whether it should stop
POLL_S = 1


@dataclass(frozen=True)
class Bundled:
    """A transcript to import as session ``session_id``."""

    session_id: str
    messages: Sequence[Message]


def is_embedded(settings: Settings) -> bool:
    """No database and no Redis configured (environment or ``.env``): nothing outside this
    process could share the gateway's data, so it runs everything itself."""
    return {"database_url", "redis_url"}.isdisjoint(settings.model_fields_set)


class _ThreadWorker(SimpleWorker):
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
            worker = _ThreadWorker([self.queue_name], connection=self.client, **WORKER_OPTIONS)
            worker.work(max_idle_time=POLL_S, logging_level="WARNING")

    def start(self) -> None:
        self.thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Ends the loop after the job at hand."""
        self.stopping.set()
        self.thread.join(timeout)


@dataclass
class Embedded:
    resources: Resources
    #: the temporary folder of the SQLite file, removed when the gateway stops
    folder: Path
    sessions: list[str]


def embedded_settings(settings: Settings, folder: Path) -> Settings:
    """The demo's defaults over ``settings``: the SQLite file in ``folder``; the offline
    summarizer answers while no auxiliary channel is configured, unless the user chose
    ``COMPACTION_FALLBACK_SUMMARY`` themselves."""
    overrides: dict[str, Any] = {"database_url": f"sqlite:///{folder / 'gateway.db'}"}
    if "fallback_summary" not in settings.model_fields_set:
        overrides["fallback_summary"] = True
    return settings.model_copy(update=overrides)


def import_bundled(store: Store, bundled: Sequence[Bundled]) -> list[str]:
    """The bundled transcripts as sessions of the ``demo`` agent; their ids."""
    store.set_agent(AGENT_ID, context_window=CONTEXT_WINDOW)
    return [
        store.create_session(item.session_id, agent_id=AGENT_ID, messages=item.messages)
        for item in bundled
    ]


@contextmanager
def embedded(
    settings: Settings, bundled: Sequence[Bundled], options: GatewayOptions
) -> Iterator[Embedded]:
    """The gateway's resources on the embedded services, its worker running; all of it
    stopped and the temporary folder removed when the block ends."""
    folder = Path(tempfile.mkdtemp(prefix="compaction-gateway-"))
    try:
        settings = embedded_settings(settings, folder)
        upgrade(settings.database_url)
        store = Store(make_sessionmaker(settings.database_url))
        sessions = import_bundled(store, bundled)
        server = fakeredis.FakeServer()
        client = fakeredis.FakeRedis(server=server)
        context = Producers(settings=settings, store=store, redis=client)
        publisher = EventPublisher(
            client, prefix=settings.channel_prefix, stream_maxlen=settings.events_stream_maxlen
        )
        runtime.install(
            runtime.Runtime(settings=settings, store=store, redis=client, publisher=publisher)
        )
        worker = InProcessWorker(client, settings.queue_name)
        worker.start()
        try:
            yield Embedded(
                Resources(
                    settings=settings,
                    producers=context,
                    events_redis=fakeredis.aioredis.FakeRedis(server=server),
                    options=options,
                    chat_fallback=OfflineChatModel(context.estimator),
                ),
                folder,
                sessions,
            )
        finally:
            worker.stop()
            runtime.install(None)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
