"""The rules the producers and the worker share, through their real paths: one resolution of a
session's window (``COMPACTION_MODEL_WINDOWS`` included) and the lock token that names the
running request (request ids holding ":" included)."""

from __future__ import annotations

import threading

import pytest

from compaction.core.contract import CompactionDone
from compaction.producers import trigger
from compaction.producers.context import Producers
from compaction.producers.wait import wait_for_compaction
from compaction.service.context import SessionContext, SessionContexts
from compaction.service.settings import Settings
from compaction.store import Store
from compaction.worker.jobs import run
from compaction.worker.lock import SessionLock
from tests.fakes import conversation
from tests.integration.worker_helpers import SQLITE_ONLY, Harness, manual

#: a model the built-in registry does not know
UNKNOWN_MODEL = "acme-tiny-chat"


def test_a_model_known_only_to_model_windows_compacts_in_the_worker(h: Harness) -> None:
    """The worker once resolved the window without ``COMPACTION_MODEL_WINDOWS``: at 200k the
    tail covered the whole conversation and ``/compact`` answered ``nothing_to_compact``."""
    runtime = h.runtime(context_window=200_000, model_windows={UNKNOWN_MODEL: 4_000})
    h.channel()
    session_id = h.store.create_session(model=UNKNOWN_MODEL)
    h.store.append_messages(session_id, conversation(12))

    final = run(runtime, manual(session_id))

    assert isinstance(final, CompactionDone), final
    assert final.removed_count > 0


def test_producer_and_worker_resolve_the_same_context(h: Harness) -> None:
    runtime = h.runtime(context_window=200_000, model_windows={UNKNOWN_MODEL: 4_000})
    producers = Producers(settings=runtime.settings, store=h.store, redis=h.redis)
    session_id = h.store.create_session(model=UNKNOWN_MODEL)
    h.store.append_messages(session_id, conversation(12))

    checked = trigger.check_and_enqueue(producers, session_id)
    worker_side = runtime.contexts.resolve(session_id)

    assert checked.max_tokens == worker_side.window == 4_000
    assert checked.threshold_tokens == worker_side.threshold_tokens


def test_an_agent_without_a_threshold_follows_the_system_setting(h: Harness) -> None:
    """Blank means inherit (docs/architecture.md, "Settings"): an agent's columns once defaulted
    to 70% and 3, so COMPACTION_THRESHOLD_PERCENT was ignored for every session with an agent."""
    h.store.set_agent("coder", protect_first_n=2)  # a new agent: its threshold is blank
    session_id = h.store.create_session(agent_id="coder", model=UNKNOWN_MODEL)
    h.store.append_messages(session_id, conversation(12))

    def check(percent: int, window: int) -> tuple[trigger.TriggerResult, SessionContext]:
        runtime = h.runtime(
            threshold_percent=percent, protect_first_n=5, model_windows={UNKNOWN_MODEL: window}
        )
        producers = Producers(settings=runtime.settings, store=h.store, redis=h.redis)
        return trigger.check_and_enqueue(producers, session_id), runtime.contexts.resolve(
            session_id
        )

    used = check(70, 10_000_000)[0].used_tokens
    window = used * 100 // 55  # the session holds 55% of the window

    at_70, _ = check(70, window)
    at_40, worker_side = check(40, window)

    assert (at_70.status, at_70.threshold_percent) == ("below_threshold", 70)
    assert (at_40.status, at_40.threshold_percent) == ("enqueued", 40)
    assert (worker_side.threshold_percent, worker_side.protect_first_n) == (40, 2)
    h.store.set_agent("coder", threshold_percent=80)
    assert check(40, window)[0].threshold_percent == 80
    h.store.set_agent("coder", clear_threshold=True)
    assert check(40, window)[0].threshold_percent == 40


@SQLITE_ONLY
@pytest.mark.parametrize("request_id", ["gw:7:abc", "plain", "a:"])
def test_waiting_on_a_request_whose_id_holds_colons_ends(h: Harness, request_id: str) -> None:
    """The token once read "<request id>:<random>" split on the first ":", so a waiter looked
    for "gw" and waited for a request that never ends."""
    runtime = h.runtime()
    producers = Producers(settings=runtime.settings, store=h.store, redis=h.redis)
    session_id = h.session(conversation(3))
    lock = SessionLock(h.redis, session_id, ttl_s=30, prefix=h.namespace.prefix, owner=request_id)
    assert lock.acquire()
    done = CompactionDone(
        session_id=session_id,
        request_id=request_id,
        reason="manual",
        removed_count=1,
        tokens_before=10,
        tokens_after=5,
    )
    publish = threading.Timer(0.2, runtime.publisher.publish, args=(done,))
    publish.start()
    try:
        final = wait_for_compaction(producers, session_id, timeout=30)
    finally:
        publish.cancel()
        lock.release()

    assert final is not None and final.request_id == request_id


def test_session_caches_are_per_instance_and_bounded(store: Store) -> None:
    settings = Settings(database_url="sqlite://", context_window=100_000)
    agent_id = store.create_agent("coder", model="acme-tiny-chat")
    store.set_agent(agent_id, threshold_percent=50)
    sessions = [store.create_session(agent_id=agent_id) for _ in range(3)]
    small = SessionContexts(store, settings, cache_size=2)
    for session_id in sessions:
        assert small.resolve(session_id, fresh=False).threshold_percent == 50
    assert len(small._sessions) == 2  # the oldest entry was evicted

    store.set_agent(agent_id, threshold_percent=80)
    # the first instance may serve its cached agent for CACHE_S; another instance never shares it
    assert small.resolve(sessions[0]).threshold_percent == 50
    assert SessionContexts(store, settings).resolve(sessions[0]).threshold_percent == 80
    assert (
        SessionContexts(store, settings, cache_s=0.0001).resolve(sessions[0]).threshold_percent
        == 80
    )
