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
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

import pytest

from compaction.core.contract import is_final
from compaction.store import Store
from compaction.worker import jobs
from compaction.worker.inflight import sweep
from compaction.worker.jobs import run
from tests.fakes import conversation
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
from tests.integration.worker_helpers import (
    SQLITE_ONLY,
    Harness,
    manual,
    on_llm_request,
    wait_until,
)
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


@contextmanager
def _no_heartbeat(lock: Any) -> Iterator[Any]:
    try:
        yield lock
    finally:
        lock.release()


@SQLITE_ONLY
def test_a_stalled_job_answered_as_lost_stays_quiet(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A live job stalled past its lock's TTL is taken for dead by another worker's watch: that
    answer is the request's only one (the job, finding its lock and its record gone, writes and
    publishes nothing)."""
    monkeypatch.setattr(jobs, "heartbeat", _no_heartbeat)
    runtime = h.runtime(lock_ttl_s=1.0, llm_timeout_s=30.0, llm_max_retries=0)
    h.channel("openai")
    session_id = h.session(conversation(12))
    request = manual(session_id)
    answered: list[int] = []

    def watched() -> None:
        """Another worker's watch looks once the lock has expired under the stalled job."""
        wait_until(lambda: h.lock_value(session_id) is None, "the lock's expiry")
        answered.append(sweep(runtime))

    on_llm_request(monkeypatch, h.fake, watched)
    run(runtime, request)

    assert answered == [1]
    finals = [e for e in h.events(session_id) if is_final(e)]
    assert [(e.type, getattr(e, "code", None)) for e in finals] == [
        ("compaction_failed", "worker_lost")
    ]
    assert [(r.status, r.code) for r in h.store.runs(session_id)] == [("failed", "worker_lost")]
    assert h.state(session_id).event_kinds == ["start", "failed"]
