"""Real worker processes (DESIGN §1, §7, §8): the ``compaction worker`` console script against the
real Redis and a PostgreSQL database of this module, with the fake auxiliary model
(``tests/llm_server.py``) served from the test process.

Covered: a job enqueued by ``service.queue`` ends ``compaction_done`` in another process;
``kill -9`` during the LLM call leaves the history as it was, the lock expires after its TTL
and a fresh worker compacts the session; a pending key stops blocking after its TTL; a worker
outlives a Redis restart between two jobs and Redis going down while a job runs;
``--pool 2 --burst`` runs two sessions' jobs and exits. What ``--metrics-port`` serves:
``test_worker_metrics.py``.

Each test has a key prefix and a queue name of its own on the shared Redis (``redis_namespace``),
given to its workers through the environment. Every worker started here runs in its own process
group (``benchmarks.processes``) and is stopped in teardown, pass or fail, then any private
redis-server.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest
import redis
from rq import Worker

from benchmarks.processes import COMPACTION, child_env, start, stop
from compaction.contract import FINAL_EVENTS, CompactionRequested
from service.keys import events_stream, lock_key, pending_key
from service.queue import compaction_queue, enqueue
from store import Store, make_sessionmaker
from store.migrate import upgrade
from store.records import StoredMessage
from tests.fakes import conversation
from tests.integration.worker_helpers import on_llm_request, wait_until
from tests.llm_server import FakeLLM, Reply
from tests.services import PrivateRedis, RedisNamespace, create_database, drop_database

pytestmark = pytest.mark.integration

#: small enough for conversation(12) (~2,000 tokens) to be over the threshold
WINDOW = 4_000
T = TypeVar("T")


# --- fixtures --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def database_url() -> Iterator[str]:
    name, url = create_database()
    try:
        upgrade(url)
        yield url
    finally:
        drop_database(name)


@pytest.fixture(scope="module")
def store(database_url: str, llm_server: FakeLLM) -> Iterator[Store]:
    factory = make_sessionmaker(database_url)
    store = Store(factory)
    llm_server.add_channel(store, "aux-fake", api_key="sk-test-worker-process-0123456789")
    yield store
    factory.kw["bind"].dispose()


@dataclass(frozen=True)
class Server:
    """A Redis server's client and the test's names on it."""

    client: redis.Redis
    names: RedisNamespace

    @classmethod
    def private(cls, names: RedisNamespace, server: PrivateRedis) -> Server:
        names = names.on(server.url)
        return cls(redis.Redis.from_url(names.url, socket_timeout=5), names)

    def key(self, name: Callable[[str, str], str], session_id: str) -> str:
        """A per-session key: ``server.key(lock_key, session_id)``."""
        return name(self.names.prefix, session_id)


@pytest.fixture
def rdb(redis_namespace: RedisNamespace, redis_client: redis.Redis) -> Server:
    return Server(redis_client, redis_namespace)


@dataclass
class Proc:
    popen: subprocess.Popen[bytes]
    log: Path

    @property
    def pid(self) -> int:
        return self.popen.pid

    def tail(self, lines: int = 30) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


@dataclass
class Processes:
    """Starts workers (``benchmarks.processes``) and private redis-servers; ``close()`` stops
    the workers, then the servers they talk to (a worker whose Redis went first logs a
    traceback on the way out)."""

    tmp: Path
    env: dict[str, str]
    started: list[Proc] = field(default_factory=list)
    servers: list[PrivateRedis] = field(default_factory=list)

    def worker(self, *args: str, env: dict[str, str] | None = None, **settings: str) -> Proc:
        """``compaction worker ARGS``; ``settings`` by name (``lock_ttl_s="2"``)."""
        merged = {
            **(env or self.env),
            **{f"COMPACTION_{k.upper()}": v for k, v in settings.items()},
        }
        log = self.tmp / f"worker-{len(self.started)}.log"
        proc = Proc(start([str(COMPACTION), "worker", *args], merged, log), log)
        self.started.append(proc)
        return proc

    def redis_server(self) -> PrivateRedis:
        server = PrivateRedis()
        server.start()
        self.servers.append(server)
        return server

    def close(self) -> None:
        for proc in reversed(self.started):
            stop(proc.popen, timeout=5)
        for server in self.servers:
            server.stop()


def worker_env(database_url: str, names: RedisNamespace) -> dict[str, str]:
    return child_env(
        **names.env(),
        COMPACTION_DATABASE_URL=database_url,
        COMPACTION_CONTEXT_WINDOW=str(WINDOW),
        COMPACTION_LLM_MAX_RETRIES="0",
        COMPACTION_LLM_TIMEOUT_S="20",
        COMPACTION_JOB_TIMEOUT_S="30",
        PYTHONUNBUFFERED="1",
    )


@pytest.fixture
def processes(
    tmp_path: Path, database_url: str, redis_namespace: RedisNamespace
) -> Iterator[Processes]:
    procs = Processes(tmp_path, worker_env(database_url, redis_namespace))
    try:
        yield procs
    finally:
        procs.close()


# --- helpers ---------------------------------------------------------------------------------


def wait_for(
    check: Callable[[], T | None], timeout: float, what: str, proc: Proc | None = None
) -> T:
    """``wait_until``, with the worker's log when it fails, and failing at once when the
    watched process dies first."""

    def step() -> T | None:
        value = check()
        if not value and proc is not None and proc.popen.poll() is not None:
            pytest.fail(
                f"{what}: the process exited ({proc.popen.returncode}) first:\n{proc.tail()}"
            )
        return value

    return wait_until(step, what, timeout, proc.tail if proc is not None else str)


def events_for(server: Server, request_id: str) -> list[dict[str, Any]]:
    out = []
    for _id, entry in server.client.xrange(events_stream(server.names.prefix)):
        event = json.loads(entry[b"event"])
        if event.get("requestId") == request_id:
            out.append(event)
    return out


def final_event(
    server: Server, request_id: str, proc: Proc | None = None, timeout: float = 30.0
) -> dict[str, Any]:
    def final() -> dict[str, Any] | None:
        return next((e for e in events_for(server, request_id) if e["type"] in FINAL_EVENTS), None)

    return wait_for(final, timeout, f"the final event of request {request_id}", proc)


def new_session(store: Store, turns: int = 12) -> str:
    session_id = store.create_session()
    store.append_messages(session_id, conversation(turns))
    return session_id


def request(server: Server, session_id: str, timeout_s: int = 30) -> CompactionRequested:
    req = CompactionRequested(session_id=session_id, reason="manual")
    enqueue(compaction_queue(server.client, server.names.queue), req, timeout_s=timeout_s)
    return req


def conversation_rows(view: list[StoredMessage]) -> list[StoredMessage]:
    return [row for row in view if not row.is_event]


# --- tests -----------------------------------------------------------------------------------


def test_job_enqueued_by_a_producer_is_done_by_a_worker_process(
    store: Store, fake_llm: FakeLLM, rdb: Server, processes: Processes
) -> None:
    session_id = new_session(store)
    req = request(rdb, session_id)
    worker = processes.worker("--burst")

    done = final_event(rdb, req.request_id, worker)
    assert done["type"] == "compaction_done", done
    assert done["sessionId"] == session_id and done["removedCount"] > 0
    assert worker.popen.wait(30) == 0, worker.tail()  # --burst: exits once the queue is empty
    # token_update follows done: read the events once the job has finished.
    assert [e["type"] for e in events_for(rdb, req.request_id)] == [
        "compaction_start",
        "compaction_done",
        "token_update",
    ]
    assert len(fake_llm.requests) == 1 and fake_llm.requests[0].path == "/v1/chat/completions"
    view = store.load_history(session_id)
    assert [r.message.id for r in view if r.is_compaction_summary] == [done["summaryMessageId"]]
    assert [r.status for r in store.runs(session_id)] == ["succeeded"]


def test_kill_9_during_the_llm_call_changes_nothing_and_the_lock_expires(
    store: Store,
    fake_llm: FakeLLM,
    rdb: Server,
    processes: Processes,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ttl_s = 2.0
    # job_timeout_s must cover llm_timeout_s x (llm_max_retries + 1) = 10 x 1; it also covers
    # the first job's import of the LLM SDKs (seconds on a busy machine)
    timing = {"lock_ttl_s": str(ttl_s), "llm_timeout_s": "10", "job_timeout_s": "30"}
    killed = threading.Event()
    on_llm_request(monkeypatch, fake_llm, lambda: killed.wait(30))  # answers the dead worker
    session_id = new_session(store)
    compacted, full = store.load_history(session_id), store.load_history(session_id, "full")
    key, pending = rdb.key(lock_key, session_id), rdb.key(pending_key, session_id)

    req = CompactionRequested(session_id=session_id, reason="manual")
    assert rdb.client.set(pending, req.request_id, nx=True, ex=90)  # as a producer queues it
    enqueue(compaction_queue(rdb.client, rdb.names.queue), req, timeout_s=30)
    worker = processes.worker("--burst", **timing)
    wait_for(lambda: fake_llm.requests, 30, "the LLM request", worker)
    assert rdb.client.exists(key), "the lock is held while the LLM works"
    assert not rdb.client.exists(pending), "a running request no longer blocks a new one"

    os.kill(worker.pid, signal.SIGKILL)
    assert worker.popen.wait(10) == -signal.SIGKILL
    killed.set()
    assert rdb.client.exists(key), "right after the kill the dead holder's lock is still there"
    assert 0 < rdb.client.pttl(key) <= ttl_s * 1000

    # The history is as it was: nothing but the UI's "compaction started" event row was added.
    assert store.load_history(session_id) == compacted
    after = store.load_history(session_id, "full")
    assert conversation_rows(after) == full
    assert [r.metadata["event"] for r in after if r.is_event] == ["start"]  # type: ignore[index]
    assert store.runs(session_id) == []
    assert events_for(rdb, req.request_id)[-1]["type"] == "compaction_start"

    # nothing deletes it: it goes when its TTL (at most ttl_s, checked above) runs out
    wait_for(lambda: not rdb.client.exists(key), 30, "the lock's expiry")

    again = request(rdb, session_id, timeout_s=30)
    fresh = processes.worker("--burst", **timing)
    done = final_event(rdb, again.request_id, fresh)
    assert done["type"] == "compaction_done", done
    assert [r.status for r in store.runs(session_id)] == ["succeeded"]
    assert not rdb.client.exists(key)


def test_a_pending_key_stops_blocking_after_its_ttl(rdb: Server) -> None:
    """A producer marks a queued request with ``SET pending NX EX ttl``; the worker deletes the
    key when it takes the job. When that never happens (the job was lost, its worker died before
    taking it), the key blocks other requests only until its TTL ends (DESIGN §7: 90 s; 2 s
    here). The producer API is not in the repository yet, so this test plays the producer."""
    client, key = rdb.client, rdb.key(pending_key, "lost-session")
    before_set = time.monotonic()
    assert client.set(key, "lost-request", nx=True, ex=2)
    assert not client.set(key, "next-request", nx=True, ex=2), "a queued request blocks the next"
    assert 0 < client.ttl(key) <= 2
    wait_for(lambda: client.set(key, "next-request", nx=True, ex=2), 30, "the pending key's expiry")
    # Not before its TTL (Redis expires keys to the millisecond; 0.1 s for clock granularity).
    assert time.monotonic() - before_set >= 1.9
    assert client.get(key) == b"next-request"


def test_a_worker_goes_on_after_a_redis_restart(
    store: Store,
    fake_llm: FakeLLM,
    processes: Processes,
    database_url: str,
    redis_namespace: RedisNamespace,
) -> None:
    """Redis restarts (empty) while the worker waits for work: it reconnects and takes the
    next job."""
    server = processes.redis_server()
    private = Server.private(redis_namespace, server)
    worker = processes.worker(env=worker_env(database_url, private.names))
    first = request(private, new_session(store))
    assert final_event(private, first.request_id, worker)["type"] == "compaction_done"
    wait_idle(private.client, worker)

    server.restart()  # same port, empty

    second = request(private, new_session(store))
    done = final_event(private, second.request_id, worker, timeout=60)
    assert done["type"] == "compaction_done", done
    assert worker.popen.poll() is None, "the worker still runs"


def test_a_worker_outlives_redis_going_down_while_a_job_runs(
    store: Store,
    fake_llm: FakeLLM,
    processes: Processes,
    database_url: str,
    redis_namespace: RedisNamespace,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = processes.redis_server()
    private = Server.private(redis_namespace, server)
    down = threading.Event()
    on_llm_request(monkeypatch, fake_llm, lambda: down.wait(30))  # answers once Redis is down
    session_id = new_session(store)
    compacted = store.load_history(session_id)

    worker = processes.worker(env=worker_env(database_url, private.names))
    request(private, session_id)
    wait_for(lambda: fake_llm.requests, 30, "the LLM request", worker)
    assert server.stop() == 0  # down while the job waits on the LLM
    down.set()
    # The job ends (lock_lost, recorded in the database), then RQ gives up on the lost Redis
    # and the worker starts a fresh one: the moment it would exit if it were going to.
    wait_for(lambda: store.runs(session_id), 30, "the failed run", worker)
    wait_for(lambda: "the worker restarts" in worker.tail(), 30, "the restart", worker)
    server.start()  # same port, empty
    assert store.load_history(session_id) == compacted, "the failed job changed nothing"

    assert worker.popen.poll() is None, (
        f"the worker exited ({worker.popen.returncode}) on the outage:\n{worker.tail(12)}"
    )
    second = request(private, new_session(store))
    assert final_event(private, second.request_id, worker)["type"] == "compaction_done"


def wait_idle(client: redis.Redis, proc: Proc) -> None:
    """Until RQ has finished its bookkeeping of the last job and waits for the next."""

    def idle() -> bool:
        workers = Worker.all(connection=client)
        return bool(workers) and all(w.get_state() == "idle" for w in workers)

    wait_for(idle, 10, "the worker back to idle", proc)
    time.sleep(0.2)  # from "idle" to blocking on the queue


def test_pool_of_two_in_burst_mode_runs_two_sessions(
    store: Store, fake_llm: FakeLLM, rdb: Server, processes: Processes
) -> None:
    fake_llm.script(Reply(delay_s=1.0))
    requests = [request(rdb, new_session(store)) for _ in range(2)]
    pool = processes.worker("--pool", "2", "--burst")

    events = [final_event(rdb, r.request_id, pool, timeout=60) for r in requests]
    assert [e["type"] for e in events] == ["compaction_done"] * 2, events
    assert {e["sessionId"] for e in events} == {r.session_id for r in requests}
    try:
        assert pool.popen.wait(30) == 0, pool.tail()
    except subprocess.TimeoutExpired:
        pytest.fail(f"the burst pool did not exit once the queue was empty:\n{pool.tail()}")
