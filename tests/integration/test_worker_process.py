"""Real worker processes (DESIGN §1, §7, §8): the ``compaction worker`` console script against the
real Redis and a PostgreSQL database of this module, with the fake auxiliary model
(``tests/llm_server.py``) served from the test process.

Covered: a job enqueued by ``service.queue`` ends ``compaction_done`` in another process;
``kill -9`` during the LLM call leaves the history as it was, the lock expires after its TTL
and a fresh worker compacts the session; a pending key stops blocking after its TTL; a worker
outlives a Redis restart between two jobs and Redis going down while a job runs;
``--metrics-port`` serves the job counter; ``--pool 2 --burst`` runs two sessions' jobs and
exits.

Each test has a key prefix and a queue name of its own on the shared Redis (``redis_namespace``),
given to its workers through the environment. Every process started here (workers, pools,
redis-server) runs in its own process group and is killed in teardown, pass or fail.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest
import redis
from rq import Worker

from compaction.contract import FINAL_EVENTS, CompactionRequested
from service.keys import events_stream, lock_key, pending_key
from service.queue import compaction_queue, enqueue
from store import Store, make_sessionmaker
from store.migrate import upgrade
from store.records import StoredMessage
from tests.fakes import conversation
from tests.integration.worker_helpers import on_llm_request
from tests.llm_server import FakeLLM, Reply
from tests.services import RedisNamespace, create_database, drop_database

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
COMPACTION = Path(sys.executable).parent / "compaction"
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
    def private(cls, names: RedisNamespace, port: int) -> Server:
        names = names.on(f"redis://127.0.0.1:{port}/0")
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
    """Starts workers and redis-servers; ``close()`` kills every process group it started."""

    tmp: Path
    env: dict[str, str]
    started: list[Proc] = field(default_factory=list)

    def start(self, argv: list[str], name: str, env: dict[str, str] | None = None) -> Proc:
        log = self.tmp / f"{name}-{len(self.started)}.log"
        with log.open("wb") as out:
            popen = subprocess.Popen(
                argv,
                cwd=ROOT,
                env=env if env is not None else self.env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own group: a pool's children die with it
            )
        proc = Proc(popen, log)
        self.started.append(proc)
        return proc

    def worker(self, *args: str, **env: str) -> Proc:
        merged = {**self.env, **{f"COMPACTION_{k.upper()}": v for k, v in env.items()}}
        return self.start([str(COMPACTION), "worker", *args], "worker", merged)

    def redis_server(self, port: int) -> Proc:
        argv = ["redis-server", "--port", str(port), "--bind", "127.0.0.1"]
        argv += ["--save", "", "--appendonly", "no", "--daemonize", "no"]
        return self.start(argv, f"redis-{port}", dict(os.environ))

    def stop(self, proc: Proc, sig: int = signal.SIGTERM, timeout: float = 10.0) -> int:
        """Signal the process group; SIGKILL it when it outlives ``timeout``."""
        if proc.popen.poll() is None:
            _killpg(proc.pid, sig)
            try:
                proc.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                _killpg(proc.pid, signal.SIGKILL)
                proc.popen.wait(10)
        _killpg(proc.pid, signal.SIGKILL)  # stragglers of the group (a pool's children)
        return proc.popen.returncode

    def close(self) -> None:
        """Workers first, then the redis-servers they talk to (a worker stopped after its
        Redis logs a traceback on the way out)."""
        servers = [p for p in self.started if p.log.name.startswith("redis-")]
        for proc in [p for p in reversed(self.started) if p not in servers] + servers:
            self.stop(proc, signal.SIGTERM, timeout=5)


def _killpg(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def worker_env(database_url: str, names: RedisNamespace) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPACTION_")}
    env.update(names.env())
    env.update(
        COMPACTION_DATABASE_URL=database_url,
        COMPACTION_CONTEXT_WINDOW=str(WINDOW),
        COMPACTION_LLM_MAX_RETRIES="0",
        COMPACTION_LLM_TIMEOUT_S="20",
        COMPACTION_JOB_TIMEOUT_S="30",
        PYTHONUNBUFFERED="1",
    )
    return env


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
    """Poll ``check`` until it returns something truthy; fail (with the worker's log) when the
    timeout passes or the watched process dies first."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if proc is not None and proc.popen.poll() is not None:
            pytest.fail(
                f"{what}: the process exited ({proc.popen.returncode}) first:\n{proc.tail()}"
            )
        if time.monotonic() > deadline:
            log = f"\n{proc.tail()}" if proc is not None else ""
            pytest.fail(f"{what}: not within {timeout:g} s{log}")
        time.sleep(0.05)


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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


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
    port = free_port()
    private = Server.private(redis_namespace, port)
    server = processes.redis_server(port)
    wait_for(lambda: _pings(private.client), 10, "the private redis-server", server)

    worker = processes.start(
        [str(COMPACTION), "worker"], "worker", worker_env(database_url, private.names)
    )
    first = request(private, new_session(store))
    assert final_event(private, first.request_id, worker)["type"] == "compaction_done"
    wait_idle(private.client, worker)

    assert processes.stop(server) == 0
    server = processes.redis_server(port)  # same port, empty: --save "" --appendonly no
    wait_for(lambda: _pings(private.client), 10, "the restarted redis-server", server)

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
    port = free_port()
    private = Server.private(redis_namespace, port)
    server = processes.redis_server(port)
    wait_for(lambda: _pings(private.client), 10, "the private redis-server", server)
    down = threading.Event()
    on_llm_request(monkeypatch, fake_llm, lambda: down.wait(30))  # answers once Redis is down
    session_id = new_session(store)
    compacted = store.load_history(session_id)

    worker = processes.start(
        [str(COMPACTION), "worker"], "worker", worker_env(database_url, private.names)
    )
    request(private, session_id)
    wait_for(lambda: fake_llm.requests, 30, "the LLM request", worker)
    assert processes.stop(server) == 0  # down while the job waits on the LLM
    down.set()
    # The job ends (lock_lost, recorded in the database), then RQ gives up on the lost Redis
    # and the worker starts a fresh one: the moment it would exit if it were going to.
    wait_for(lambda: store.runs(session_id), 30, "the failed run", worker)
    wait_for(lambda: "the worker restarts" in worker.tail(), 30, "the restart", worker)
    server = processes.redis_server(port)
    wait_for(lambda: _pings(private.client), 10, "the restarted redis-server", server)
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


def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.ConnectionError:
        return False


def test_metrics_port_serves_the_job_counter(
    store: Store, fake_llm: FakeLLM, rdb: Server, processes: Processes
) -> None:
    port = free_port()
    worker = processes.worker("--metrics-port", str(port))
    req = request(rdb, new_session(store))
    assert final_event(rdb, req.request_id, worker)["type"] == "compaction_done"

    def done_count() -> float | None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
                text = reply.read().decode()
        except OSError:
            return None
        for line in text.splitlines():
            if line.startswith('compaction_jobs_total{code="",outcome="done"}'):
                return float(line.split()[-1])
        return None

    assert wait_for(done_count, 15, "compaction_jobs_total{outcome=done} >= 1", worker) >= 1


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
