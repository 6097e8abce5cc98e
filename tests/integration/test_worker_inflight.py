"""A worker killed mid-job leaves no request hanging (docs/architecture.md, "The job"): its
request ends with one ``compaction_failed`` (``worker_lost``) and its "compacting" row gets its
failed row, whoever finds it first: the next job of the session once the dead holder's lock has
expired, RQ's maintenance finding the job abandoned, or a forking worker whose work horse died.
The history stays as it was.

Real worker processes, killed with SIGKILL while the fake LLM holds its reply (the same set-up
as ``test_worker_process.py``).
"""

from __future__ import annotations

import os
import signal
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest
from rq.registry import StartedJobRegistry

from compaction.core.contract import CompactionRequested
from compaction.service.keys import lock_key
from compaction.service.queue import compaction_queue, enqueue
from compaction.store import Store, StoredMessage
from tests.integration.process_helpers import (
    Proc,
    Processes,
    Server,
    conversation_rows,
    events_for,
    final_event,
    new_session,
    request,
    wait_for,
)
from tests.integration.worker_helpers import on_llm_request
from tests.llm_server import FakeLLM

#: a short lock (quick expiry after the kill); the job timeout covers the LLM's and start-up
TIMING = {"lock_ttl_s": "2", "llm_timeout_s": "10", "job_timeout_s": "30"}


@dataclass
class Lost:
    """A request whose worker (or work horse) was killed while the fake LLM held its reply."""

    request: CompactionRequested
    worker: Proc
    compacted: list[StoredMessage]
    full: list[StoredMessage]


def start_and_kill(
    store: Store,
    fake: FakeLLM,
    server: Server,
    processes: Processes,
    monkeypatch: pytest.MonkeyPatch,
    *args: str,
    **settings: str,
) -> Lost:
    """Run a manual request in ``compaction worker ARGS`` and SIGKILL the process doing the
    job (the worker, or its work horse under ``--fork``) while the LLM call waits."""
    killed = threading.Event()
    on_llm_request(monkeypatch, fake, lambda: killed.wait(30))
    session_id = new_session(store)
    compacted, full = store.load_history(session_id), store.load_history(session_id, "full")
    req = request(server, session_id)
    worker = processes.worker(*args, env=None, **{**TIMING, **settings})
    wait_for(lambda: fake.requests, 30, "the LLM request", worker)
    if "--fork" in args:
        os.kill(horse(worker.pid), signal.SIGKILL)
    else:  # the worker itself, then its lock expires
        os.kill(worker.pid, signal.SIGKILL)
        assert worker.popen.wait(10) == -signal.SIGKILL
        key = server.key(lock_key, session_id)
        wait_for(lambda: not server.client.exists(key), 30, "the lock's expiry")
    killed.set()
    assert events_for(server, req.request_id)[-1]["type"] == "compaction_start"
    return Lost(req, worker, compacted, full)


def horse(pid: int) -> int:
    [child] = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return int(child)


def event_rows(store: Store, session_id: str) -> list[tuple[Any, Any]]:
    events = [r.metadata or {} for r in store.load_history(session_id, "full") if r.is_event]
    return [(m["event"], m.get("requestId")) for m in events]


def assert_lost(store: Store, server: Server, lost: Lost, proc: Proc) -> None:
    """One ``worker_lost`` for the lost request, its failed run and row; history as it was; the
    worker that answered it exits (``--burst``) once its queue is empty."""
    req = lost.request
    failed = final_event(server, req.request_id, proc)
    assert failed["type"] == "compaction_failed" and failed["code"] == "worker_lost", failed
    assert failed["reason"] == "manual" and failed["sessionId"] == req.session_id
    assert [e["type"] for e in events_for(server, req.request_id)] == [
        "compaction_start",
        "compaction_failed",
    ]
    runs = [r for r in store.runs(req.session_id) if r.request_id == req.request_id]
    assert [(r.status, r.code) for r in runs] == [("failed", "worker_lost")]
    rows = [kind for kind, rid in event_rows(store, req.session_id) if rid == req.request_id]
    assert rows == ["start", "failed"]
    assert store.load_history(req.session_id) == lost.compacted
    assert conversation_rows(store.load_history(req.session_id, "full")) == lost.full
    assert proc.popen.wait(30) == 0, proc.tail()


def test_the_next_job_of_the_session_reports_the_lost_request(
    process_store: Store,
    fake_llm: FakeLLM,
    rdb: Server,
    processes: Processes,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lost = start_and_kill(process_store, fake_llm, rdb, processes, monkeypatch, "--burst")

    # An auto request under the threshold: the next job reports the lost request, then skips.
    auto = CompactionRequested(
        session_id=lost.request.session_id, reason="auto", context_window=1_000_000
    )
    enqueue(compaction_queue(rdb.client, rdb.names.queue), auto, timeout_s=30)
    fresh = processes.worker("--burst", env=None, **TIMING)
    assert final_event(rdb, auto.request_id, fresh)["code"] == "below_threshold"
    assert_lost(process_store, rdb, lost, fresh)


def test_rq_maintenance_reports_an_abandoned_job(
    process_store: Store,
    fake_llm: FakeLLM,
    rdb: Server,
    processes: Processes,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No other request comes for the session: RQ's maintenance, in the next worker to start,
    finds the job abandoned once its heartbeat is overdue (pushed into the past here instead of
    waiting the job timeout and a minute)."""
    lost = start_and_kill(process_store, fake_llm, rdb, processes, monkeypatch, "--burst")
    started = StartedJobRegistry(rdb.names.queue, connection=rdb.client)
    entries = cast(list[bytes], rdb.client.zrange(started.key, 0, -1))
    assert entries, "the dead worker's job is still registered as started"
    rdb.client.zadd(started.key, dict.fromkeys(entries, 1))

    fresh = processes.worker("--burst", env=None, **TIMING)
    assert_lost(process_store, rdb, lost, fresh)


def test_a_forking_worker_reports_its_killed_work_horse_at_once(
    process_store: Store,
    fake_llm: FakeLLM,
    rdb: Server,
    processes: Processes,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lost = start_and_kill(
        process_store, fake_llm, rdb, processes, monkeypatch, "--burst", "--fork", lock_ttl_s="60"
    )
    assert_lost(process_store, rdb, lost, lost.worker)
    # The horse is known dead: its lock went with it, long before its TTL.
    assert not rdb.client.exists(rdb.key(lock_key, lost.request.session_id))
