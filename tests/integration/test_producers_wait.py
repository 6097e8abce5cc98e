"""Waiting for a session's compaction (producers/wait.py): the final event once the job is done,
a clear timeout, nothing when nothing is pending."""

from __future__ import annotations

import threading
import time

import pytest

from compaction import producers
from compaction.producers import trigger
from compaction.producers.context import Producers
from compaction.producers.wait import wait_for_compaction
from tests.integration.producer_helpers import drain, looked_up, session_with


def test_wait_returns_the_final_event_after_done(
    ctx: Producers, monkeypatch: pytest.MonkeyPatch
) -> None:
    looked = looked_up(monkeypatch, producers.wait)
    session_id = session_with(ctx, 12)
    queued = trigger.request_manual(ctx, session_id)
    waited: list[object] = []
    waiter = threading.Thread(
        target=lambda: waited.append(wait_for_compaction(ctx, session_id, timeout=30))
    )
    waiter.start()  # RQ's worker installs signal handlers: it runs in the main thread
    assert looked.wait(30)
    drain(ctx)
    waiter.join()
    event = waited[0]
    assert event is not None and event.type == "compaction_done"  # type: ignore[attr-defined]
    assert event.request_id == queued.request_id  # type: ignore[attr-defined]
    assert wait_for_compaction(ctx, session_id, timeout=1) is None  # nothing pending now


def test_wait_times_out_clearly_when_nothing_happens(ctx: Producers) -> None:
    session_id = session_with(ctx, 12)
    trigger.request_manual(ctx, session_id)  # queued, but no worker runs it
    started = time.monotonic()
    with pytest.raises(TimeoutError, match="no final event"):
        wait_for_compaction(ctx, session_id, timeout=0.5)
    assert 0.5 <= time.monotonic() - started < 30  # waited its time; 30: no hang


def test_wait_without_anything_pending_is_none(ctx: Producers) -> None:
    assert wait_for_compaction(ctx, session_with(ctx, 2), timeout=0.1) is None
