"""A request whose worker died ends by itself (docs/architecture.md, "The job", "A worker that
dies"): every live worker watches the running records, and the first to find one whose lock has
expired answers it with ``compaction_failed`` (``worker_lost``), within the lock's TTL and a few
seconds, with no other request of the session and no RQ maintenance. Two watching workers
answer it once.

Real worker processes; the one doing the job is killed with SIGKILL while the fake LLM holds its
reply (the same set-up as ``test_worker_inflight.py``).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from functools import partial

import pytest

from compaction.store import Store
from tests.integration.process_helpers import (
    Proc,
    Processes,
    Server,
    events_for,
    final_event,
    new_session,
    request,
    wait_for,
)
from tests.integration.worker_helpers import on_llm_request
from tests.llm_server import FakeLLM

LOCK_TTL_S = 5
#: what the TTL allows besides: the watch's period, the answer's writes, a loaded machine
GRACE_S = 5
TIMING = {"lock_ttl_s": str(LOCK_TTL_S), "llm_timeout_s": "10", "job_timeout_s": "30"}


def listening(proc: Proc) -> bool:
    return "Listening on" in proc.tail()


def test_a_killed_workers_request_ends_as_worker_lost_within_the_lock_ttl(
    process_store: Store,
    fake_llm: FakeLLM,
    rdb: Server,
    processes: Processes,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    killed = threading.Event()
    on_llm_request(monkeypatch, fake_llm, lambda: killed.wait(30))
    session_id = new_session(process_store)
    compacted = process_store.load_history(session_id)
    req = request(rdb, session_id)
    doomed = processes.worker(env=None, **TIMING)
    wait_for(lambda: fake_llm.requests, 30, "the LLM request", doomed)
    # two more workers, idle: no other request comes for the session
    watchers = [processes.worker(env=None, **TIMING) for _ in range(2)]
    for watcher in watchers:  # started (imports take seconds on a loaded machine)
        wait_for(partial(listening, watcher), 60, "a watcher's start", watcher)

    os.kill(doomed.pid, signal.SIGKILL)
    died = time.monotonic()
    assert doomed.popen.wait(10) == -signal.SIGKILL
    killed.set()

    failed = final_event(rdb, req.request_id, watchers[0], timeout=LOCK_TTL_S + GRACE_S + 10)
    took = time.monotonic() - died
    assert (failed["type"], failed.get("code")) == ("compaction_failed", "worker_lost"), failed
    assert took <= LOCK_TTL_S + GRACE_S, f"{took:.1f} s after the kill"
    time.sleep(2)  # a second report would come from the other watcher's next look
    assert [e["type"] for e in events_for(rdb, req.request_id)] == [
        "compaction_start",
        "compaction_failed",
    ]
    runs = [r for r in process_store.runs(session_id) if r.request_id == req.request_id]
    assert [(r.status, r.code) for r in runs] == [("failed", "worker_lost")]
    assert process_store.load_history(session_id) == compacted
    assert all(w.popen.poll() is None for w in watchers), watchers[0].tail()
