"""What a manual request gets from the worker (docs/architecture.md, "The job"): sent while a
compaction of the session runs, it is queued and waits for the lock, then runs with its focus
(an auto request is answered ``in_flight``/``lock_held`` as before); a session with nothing
between its protected head and its minimal tail is answered before anything is announced; the
``token_update`` after a run carries the user's model usage and the session's standing
compactions; ``restore`` says what it gave back. Same harness as test_worker_jobs.py."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
import redis

from compaction.core.contract import (
    CompactionDone,
    CompactionFailed,
    CompactionSkipped,
    TokenUpdate,
    TokenUsage,
)
from compaction.core.messages import Message
from compaction.service.keys import lock_key
from compaction.service.queue import EnqueueResult, submit
from compaction.service.usage import remember_usage
from compaction.worker import updates
from compaction.worker.jobs import run
from compaction.worker.lock import SessionLock
from tests.fakes import conversation
from tests.integration.worker_helpers import (
    SQLITE_ONLY,
    Harness,
    auto,
    manual,
    on_llm_request,
)

FOCUS = "keep the database schema decisions"


def test_a_compact_while_an_auto_run_holds_the_lock_waits_then_runs(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = h.runtime(llm_timeout_s=30.0, llm_max_retries=0)
    settings = runtime.settings
    h.channel("openai")
    session_id = h.session(conversation(40, tool_chars=100))  # over the threshold
    usage = TokenUsage(input_tokens=2_900, output_tokens=310, total_tokens=3_210, api_calls=4)
    remember_usage(h.redis, h.namespace.prefix, session_id, usage)
    first, compact = auto(session_id), manual(session_id, focus=FOCUS)
    waiting = threading.Event()
    acquire = SessionLock.acquire

    def spied(lock: SessionLock, wait_s: float = 0) -> bool:
        if wait_s:
            waiting.set()
        return acquire(lock, wait_s)

    monkeypatch.setattr(SessionLock, "acquire", spied)
    results: dict[str, object] = {}
    later = threading.Thread(target=lambda: results.setdefault("manual", run(runtime, compact)))

    def meanwhile() -> None:
        """While the auto run waits on the model: the ``/compact`` is queued (an auto request
        is not), and its job waits for the lock."""
        assert submit(h.redis, settings, auto(session_id)).status == "in_flight"
        assert submit(h.redis, settings, compact) == EnqueueResult("enqueued", compact.request_id)
        later.start()
        assert waiting.wait(30)

    on_llm_request(monkeypatch, h.fake, meanwhile)

    results["auto"] = run(runtime, first)
    later.join(timeout=60)

    assert isinstance(results["auto"], CompactionDone), results["auto"]
    done = results["manual"]
    assert isinstance(done, CompactionDone) and done.reason == "manual", done
    assert len(h.fake.requests) == 2 and FOCUS in str(h.fake.requests[1].body)
    assert FOCUS not in str(h.fake.requests[0].body)
    assert [(r.status, r.reason) for r in h.store.runs(session_id)] == [
        ("succeeded", "auto"),
        ("succeeded", "manual"),
    ]
    updates = [e for e in h.events(session_id) if isinstance(e, TokenUpdate)]
    assert [(u.current, u.context.compactions) for u in updates] == [(usage, 1), (usage, 2)]
    summaries = [m for m in h.store.load_history(session_id) if m.is_compaction_summary]
    assert [m.id for m in summaries] == [done.summary_message_id]


@SQLITE_ONLY
def test_a_manual_request_gives_up_after_its_lock_wait(h: Harness) -> None:
    runtime = h.runtime(manual_lock_wait_s=1)
    h.channel("openai")
    session_id = h.session(conversation(12))
    before = h.state(session_id)
    h.redis.set(lock_key(h.namespace.prefix, session_id), "a-stuck-worker", px=60_000)

    skipped = run(runtime, manual(session_id, focus=FOCUS))

    assert isinstance(skipped, CompactionSkipped) and skipped.code == "lock_held"
    assert skipped.detail == "another compaction of this session is running (waited 1 s)"
    assert [e.type for e in h.events(session_id)] == ["compaction_skipped"]
    assert h.state(session_id) == before and not h.fake.requests


def within_head() -> list[Message]:
    """Over the 4,000-token window's threshold, yet all of it in the protected head."""
    return [
        Message(role="system", content="You are a coding agent."),
        Message(role="user", content="Review this log:\n" + "error: disk full\n" * 800),
    ]


def test_nothing_to_compact_is_answered_before_any_start(h: Harness) -> None:
    """An auto request is skipped, leaving no trace in the history; a manual one fails with
    its "failed" bubble and run record, but never says it started."""
    runtime = h.runtime()
    h.channel("openai")
    session_id = h.session(within_head())
    before = h.state(session_id)

    skipped = run(runtime, auto(session_id))

    assert isinstance(skipped, CompactionSkipped) and skipped.code == "nothing_to_compact"
    assert [e.type for e in h.events(session_id)] == ["compaction_skipped"]
    assert h.state(session_id) == before and h.store.runs(session_id) == []

    failed = run(runtime, manual(session_id, focus=FOCUS))

    assert isinstance(failed, CompactionFailed) and failed.code == "nothing_to_compact"
    assert [e.type for e in h.events(session_id)] == ["compaction_skipped", "compaction_failed"]
    after = h.state(session_id)
    assert after.unchanged_since(before) and after.event_kinds == ["failed"]
    [record] = h.store.runs(session_id)
    assert (record.status, record.code, record.reason) == ("failed", "nothing_to_compact", "manual")
    assert not h.fake.requests and h.lock_value(session_id) is None


def test_restore_says_what_it_gave_back(
    h: Harness, command: Callable[..., tuple[int, str, str]]
) -> None:
    runtime = h.runtime()
    h.channel("openai")
    session_id = h.session(conversation(12))
    done = run(runtime, manual(session_id))
    assert isinstance(done, CompactionDone) and done.removed_count > 0

    status, out, _ = command("restore", str(done.run_id))

    assert status == 0
    assert out == (
        f"restored run {done.run_id} of session {session_id}: {done.removed_count} messages "
        f"visible again, {done.pruned_count} pruned tool outputs whole again, its summary "
        "hidden\n"
    )


@SQLITE_ONLY
def test_a_token_update_that_cannot_be_read_leaves_the_compaction_done(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The figures come after ``compaction_done``: Redis failing there is no failure."""

    def unreachable(*_args: object) -> TokenUsage:
        raise redis.ConnectionError("Redis went away")

    monkeypatch.setattr(updates, "last_usage", unreachable)
    runtime = h.runtime()
    h.channel("openai")
    session_id = h.session(conversation(12))

    done = run(runtime, manual(session_id))

    assert isinstance(done, CompactionDone), done
    assert [e.type for e in h.events(session_id)] == ["compaction_start", "compaction_done"]
    assert [r.status for r in h.store.runs(session_id)] == ["succeeded"]
