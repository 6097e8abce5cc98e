"""The worker job and its session lock (docs/architecture.md, "The job"): a lock taken over or
expired under a running job means nothing is written; the heartbeat keeps it through a slow
model. Same harness as ``test_worker_jobs.py``."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from compaction.core.contract import CompactionDone
from compaction.service.keys import lock_key
from compaction.worker import jobs
from compaction.worker.jobs import run
from tests.fakes import conversation
from tests.integration.worker_helpers import (
    SQLITE_ONLY,
    Harness,
    assert_failed,
    manual,
    on_llm_request,
    wait_until,
)


def test_lock_taken_over_mid_run_writes_nothing(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = h.runtime(llm_timeout_s=30.0, llm_max_retries=0)
    h.channel("openai")
    session_id = h.session(conversation(12))
    before = h.state(session_id)
    request = manual(session_id)
    key = lock_key(h.namespace.prefix, session_id)
    on_llm_request(monkeypatch, h.fake, lambda: h.redis.set(key, "intruder", px=30_000))

    final = run(runtime, request)

    assert h.redis.get(key) == b"intruder"  # the other holder's lock is left alone
    h.redis.delete(key)
    failed = assert_failed(h, session_id, before, final, request, "lock_lost")
    assert "nothing written" in failed.error


@contextmanager
def _no_heartbeat(lock: Any) -> Iterator[Any]:
    try:
        yield lock
    finally:
        lock.release()


@SQLITE_ONLY
def test_lock_expired_mid_run_writes_nothing(h: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jobs, "heartbeat", _no_heartbeat)  # a worker stalled past its TTL
    runtime = h.runtime(lock_ttl_s=1.0, llm_timeout_s=30.0, llm_max_retries=0)
    h.channel("openai")
    session_id = h.session(conversation(12))
    before = h.state(session_id)
    request = manual(session_id)

    def expire() -> None:
        """The model answers only once the lock has expired under the job."""
        wait_until(lambda: h.lock_value(session_id) is None, "the lock's expiry")

    on_llm_request(monkeypatch, h.fake, expire)

    final = run(runtime, request)

    assert_failed(h, session_id, before, final, request, "lock_lost")


@SQLITE_ONLY
def test_heartbeat_keeps_the_lock_through_a_slow_model(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    ttl_s = 1.0  # renewed every third: a beat may come up to 0.67 s late on a loaded machine
    runtime = h.runtime(lock_ttl_s=ttl_s, llm_timeout_s=30.0, llm_max_retries=0)
    h.channel("openai")
    session_id = h.session(conversation(12))
    held: list[bytes | None] = []

    def slow_model() -> None:
        """Answer after 1.6 TTLs, having read the lock at the start and at the end."""
        held.append(h.lock_value(session_id))
        time.sleep(1.6 * ttl_s)
        held.append(h.lock_value(session_id))

    on_llm_request(monkeypatch, h.fake, slow_model)

    done = run(runtime, manual(session_id))

    assert isinstance(done, CompactionDone), done
    assert held[0] is not None and held == [held[0]] * 2  # the same holder throughout
    assert h.lock_value(session_id) is None
