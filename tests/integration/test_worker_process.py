"""Real worker processes (docs/architecture.md, "The job"): the ``compaction worker`` console
script against the real Redis and a PostgreSQL database of this module, with the fake auxiliary
model (``tests/llm_server.py``) served from the test process.

Covered: a job enqueued by ``service.queue`` ends ``compaction_done`` in another process;
``kill -9`` during the LLM call leaves the history as it was, the lock expires after its TTL
and a fresh worker compacts the session; a pending key stops blocking after its TTL; a worker
outlives a Redis restart between two jobs and Redis going down while a job runs;
``--pool 2 --burst`` runs two sessions' jobs and exits. What ``--metrics-port`` serves:
``test_worker_metrics.py``.

Each test has a key prefix and a queue name of its own on the shared Redis (``redis_namespace``),
given to its workers through the environment. Every worker started here runs in its own process
group (``tests/processes.py``) and is stopped in teardown, pass or fail, then any private
redis-server (the fixtures in ``conftest.py``, the helpers in ``process_helpers.py``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time

import pytest

from compaction.core.contract import CompactionRequested
from compaction.service.keys import lock_key, pending_key, pending_value
from compaction.service.queue import compaction_queue, enqueue
from compaction.store import Store
from tests.integration.process_helpers import (
    Processes,
    Server,
    conversation_rows,
    events_for,
    final_event,
    new_session,
    request,
    wait_for,
    wait_idle,
    worker_env,
)
from tests.integration.worker_helpers import on_llm_request
from tests.llm_server import FakeLLM, Reply
from tests.services import RedisNamespace


def test_job_enqueued_by_a_producer_is_done_by_a_worker_process(
    process_store: Store, fake_llm: FakeLLM, rdb: Server, processes: Processes
) -> None:
    session_id = new_session(process_store)
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
    view = process_store.load_history(session_id)
    assert [r.message.id for r in view if r.is_compaction_summary] == [done["summaryMessageId"]]
    assert [r.status for r in process_store.runs(session_id)] == ["succeeded"]


def test_kill_9_during_the_llm_call_changes_nothing_and_the_lock_expires(
    process_store: Store,
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
    session_id = new_session(process_store)
    compacted = process_store.load_history(session_id)
    full = process_store.load_history(session_id, "full")
    key, pending = rdb.key(lock_key, session_id), rdb.key(pending_key, session_id)

    req = CompactionRequested(session_id=session_id, reason="manual")
    # as a producer queues it (service.queue.submit)
    assert rdb.client.set(pending, pending_value("manual", req.request_id), nx=True, ex=90)
    enqueue(compaction_queue(rdb.client, rdb.names.queue), req, timeout_s=30)
    worker = processes.worker("--burst", env=None, **timing)
    wait_for(lambda: fake_llm.requests, 30, "the LLM request", worker)
    assert rdb.client.exists(key), "the lock is held while the LLM works"
    assert not rdb.client.exists(pending), "a running request no longer blocks a new one"

    os.kill(worker.pid, signal.SIGKILL)
    assert worker.popen.wait(10) == -signal.SIGKILL
    killed.set()
    assert rdb.client.exists(key), "right after the kill the dead holder's lock is still there"
    assert 0 < rdb.client.pttl(key) <= ttl_s * 1000

    # The history is as it was: nothing but the UI's "compaction started" event row was added.
    assert process_store.load_history(session_id) == compacted
    after = process_store.load_history(session_id, "full")
    assert conversation_rows(after) == full
    assert [r.metadata["event"] for r in after if r.is_event] == ["start"]  # type: ignore[index]
    assert process_store.runs(session_id) == []
    assert events_for(rdb, req.request_id)[-1]["type"] == "compaction_start"

    # nothing deletes it: it goes when its TTL (at most ttl_s, checked above) runs out
    wait_for(lambda: not rdb.client.exists(key), 30, "the lock's expiry")

    again = request(rdb, session_id, timeout_s=30)
    fresh = processes.worker("--burst", env=None, **timing)
    done = final_event(rdb, again.request_id, fresh)
    assert done["type"] == "compaction_done", done
    # the fresh job answered the lost request first (test_worker_inflight.py)
    assert [(r.status, r.code) for r in process_store.runs(session_id)] == [
        ("failed", "worker_lost"),
        ("succeeded", None),
    ]
    assert fresh.popen.wait(30) == 0, fresh.tail()  # --burst: the job has ended, lock released
    assert not rdb.client.exists(key)


def test_a_pending_key_stops_blocking_after_its_ttl(rdb: Server) -> None:
    """A producer marks a queued request with ``SET pending NX EX ttl``; the worker deletes the key
    when it takes the job. When that never happens (the job was lost, its worker died before taking
    it), the key blocks other requests only until its TTL ends (docs/architecture.md, "Settings":
    90 s; 2 s here). The producer API is not in the repository yet, so this test plays the
    producer."""
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
    process_store: Store,
    fake_llm: FakeLLM,
    processes: Processes,
    process_database_url: str,
    redis_namespace: RedisNamespace,
) -> None:
    """Redis restarts (empty) while the worker waits for work: it reconnects and takes the
    next job."""
    server = processes.redis_server()
    private = Server.private(redis_namespace, server)
    worker = processes.worker(env=worker_env(process_database_url, private.names))
    first = request(private, new_session(process_store))
    assert final_event(private, first.request_id, worker)["type"] == "compaction_done"
    wait_idle(private.client, worker)

    server.restart()  # same port, empty

    second = request(private, new_session(process_store))
    done = final_event(private, second.request_id, worker, timeout=60)
    assert done["type"] == "compaction_done", done
    assert worker.popen.poll() is None, "the worker still runs"


def test_a_worker_outlives_redis_going_down_while_a_job_runs(
    process_store: Store,
    fake_llm: FakeLLM,
    processes: Processes,
    process_database_url: str,
    redis_namespace: RedisNamespace,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = processes.redis_server()
    private = Server.private(redis_namespace, server)
    down = threading.Event()
    on_llm_request(monkeypatch, fake_llm, lambda: down.wait(30))  # answers once Redis is down
    session_id = new_session(process_store)
    compacted = process_store.load_history(session_id)

    worker = processes.worker(env=worker_env(process_database_url, private.names))
    request(private, session_id)
    wait_for(lambda: fake_llm.requests, 30, "the LLM request", worker)
    assert server.stop() == 0  # down while the job waits on the LLM
    down.set()
    # The job ends (lock_lost, recorded in the database), then RQ gives up on the lost Redis
    # and the worker starts a fresh one: the moment it would exit if it were going to.
    wait_for(lambda: process_store.runs(session_id), 30, "the failed run", worker)
    wait_for(lambda: "the worker restarts" in worker.tail(), 30, "the restart", worker)
    server.start()  # same port, empty
    assert process_store.load_history(session_id) == compacted, "the failed job changed nothing"

    assert worker.popen.poll() is None, (
        f"the worker exited ({worker.popen.returncode}) on the outage:\n{worker.tail(12)}"
    )
    second = request(private, new_session(process_store))
    assert final_event(private, second.request_id, worker)["type"] == "compaction_done"


def test_pool_of_two_in_burst_mode_runs_two_sessions(
    process_store: Store, fake_llm: FakeLLM, rdb: Server, processes: Processes
) -> None:
    fake_llm.script(Reply(delay_s=1.0))
    requests = [request(rdb, new_session(process_store)) for _ in range(2)]
    pool = processes.worker("--pool", "2", "--burst")

    events = [final_event(rdb, r.request_id, pool, timeout=60) for r in requests]
    assert [e["type"] for e in events] == ["compaction_done"] * 2, events
    assert {e["sessionId"] for e in events} == {r.session_id for r in requests}
    try:
        assert pool.popen.wait(30) == 0, pool.tail()
    except subprocess.TimeoutExpired:
        pytest.fail(f"the burst pool did not exit once the queue was empty:\n{pool.tail()}")
