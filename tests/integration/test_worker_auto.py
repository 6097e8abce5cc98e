"""The ``compaction_requested`` job's triggers (docs/architecture.md, "The algorithm"): an auto
request while a run holds the lock, the anti-loop, and auto requests that stop before
summarizing. Same setting as test_worker_jobs.py: real store, real Redis, the SDKs against the
loopback fake."""

from __future__ import annotations

import pytest

from compaction.core.contract import (
    CompactionDone,
    CompactionSkipped,
    TokenUpdate,
)
from compaction.core.pruning import PLACEHOLDER
from compaction.worker.jobs import run
from compaction.worker.runtime import Runtime
from tests.fakes import conversation
from tests.integration.helpers import record_run
from tests.integration.worker_helpers import (
    SQLITE_ONLY,
    Harness,
    auto,
    estimate_view,
    manual,
    on_llm_request,
)

# --- one session, two requests ---------------------------------------------------------


def test_an_auto_request_while_a_run_holds_the_lock_is_skipped(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Auto requests never wait: one that finds the session's lock held ends ``lock_held`` at
    once, and the running compaction stays the only one (a manual request waits for the lock
    instead: test_worker_manual.py)."""
    runtime = h.runtime(llm_timeout_s=30.0, llm_max_retries=0)
    h.channel("openai")
    session_id = h.session(conversation(40, tool_chars=100))  # over the threshold
    busy: list[object] = []
    # while the manual run waits on the model, an auto job of the session starts
    on_llm_request(monkeypatch, h.fake, lambda: busy.append(run(runtime, auto(session_id))))

    done = run(runtime, manual(session_id))

    [skipped] = busy
    assert isinstance(skipped, CompactionSkipped) and skipped.code == "lock_held"
    assert skipped.detail == "another compaction of this session is running"
    assert isinstance(done, CompactionDone)
    assert len(h.fake.requests) == 1
    finals_published = [e.type for e in h.events() if e.type != "token_update"]
    assert sorted(finals_published) == [
        "compaction_done",
        "compaction_skipped",
        "compaction_start",
    ]
    full = h.store.load_history(session_id, "full")
    assert [m.id for m in full if m.is_compaction_summary] == [done.summary_message_id]
    assert [(r.status, r.reason) for r in h.store.runs(session_id)] == [("succeeded", done.reason)]
    assert h.lock_value(session_id) is None


# --- anti-loop and the auto triggers (docs/architecture.md, "The algorithm") ----------------------


def _weak_runs(h: Harness, runtime: Runtime, session_id: str, count: int = 2) -> int:
    """Record ``count`` succeeded runs that each saved ~1%, ending at today's size."""
    now = estimate_view(runtime, h.state(session_id))
    for _ in range(count):
        record_run(h.store, session_id, now + now // 100, now)
    return now


def test_anti_loop_suppresses_auto_but_not_manual(h: Harness) -> None:
    runtime = h.runtime()
    h.channel("openai")
    session_id = h.session(conversation(40, tool_chars=100))
    _weak_runs(h, runtime, session_id)
    before = h.state(session_id)
    runs_before = h.store.runs(session_id)

    skipped = run(runtime, auto(session_id))

    assert isinstance(skipped, CompactionSkipped) and skipped.code == "suppressed"
    assert h.fake.requests == []
    assert [e.type for e in h.events()] == ["compaction_skipped"]
    assert h.store.runs(session_id) == runs_before
    after = h.state(session_id)
    assert after.unchanged_since(before) and after.events == before.events

    done = run(runtime, manual(session_id))
    assert isinstance(done, CompactionDone), done
    assert len(h.fake.requests) == 1


@SQLITE_ONLY
def test_anti_loop_lifts_once_the_session_grows(h: Harness) -> None:
    runtime = h.runtime()
    h.channel("openai")
    session_id = h.session(conversation(40, tool_chars=100))
    _weak_runs(h, runtime, session_id)
    # the session grew by more than 10% since the last weak run
    h.store.append_messages(
        session_id, conversation(8, tool_chars=100, system=False, first_turn=40)
    )

    done = run(runtime, auto(session_id))

    assert isinstance(done, CompactionDone), done
    assert len(h.fake.requests) == 1


def test_auto_request_below_the_threshold_is_skipped(h: Harness) -> None:
    runtime = h.runtime()
    h.channel("openai")
    session_id = h.session(conversation(12))  # ~2,000 tokens, threshold 2,800
    before = h.state(session_id)

    skipped = run(runtime, auto(session_id))

    assert isinstance(skipped, CompactionSkipped) and skipped.code == "below_threshold"
    assert h.events()[-1].to_wire() == skipped.to_wire()
    assert h.fake.requests == []
    assert h.store.runs(session_id) == []
    assert h.state(session_id).unchanged_since(before)
    assert h.lock_value(session_id) is None


@SQLITE_ONLY
@pytest.mark.parametrize(
    ("tool_chars", "expected"),
    [(400, []), (1_000, ["start", "done"])],
    ids=["below_threshold", "pruned_only"],
)
def test_auto_request_without_a_summary_leaves_no_dangling_start_row(
    h: Harness, tool_chars: int, expected: list[str]
) -> None:
    runtime = h.runtime()
    h.channel("openai")
    session_id = h.session(conversation(12, tool_chars=tool_chars))

    final = run(runtime, auto(session_id))

    assert isinstance(final, CompactionSkipped | CompactionDone), final
    assert h.state(session_id).event_kinds == expected


def test_auto_request_that_pruning_settles_writes_only_pruning(h: Harness) -> None:
    runtime = h.runtime()
    h.channel("openai")
    session_id = h.session(conversation(12, tool_chars=1_000))  # over; pruned, under
    before = h.state(session_id)

    done = run(runtime, auto(session_id))

    assert isinstance(done, CompactionDone), done
    assert done.summary_message_id is None and done.removed_count == 0
    assert done.pruned_count > 0
    assert h.fake.requests == []
    [record] = h.store.runs(session_id)
    assert (record.status, record.summary_message_id) == ("succeeded", None)
    assert (record.pruned_count, record.removed_count) == (done.pruned_count, 0)
    assert (record.tokens_before, record.tokens_after) == (done.tokens_before, done.tokens_after)

    after = h.state(session_id)
    pruned = [m for m in after.conversation if m.pruned_at is not None]
    assert len(pruned) == done.pruned_count
    assert all(m.message.role == "tool" for m in pruned)
    # nothing lost: the full view keeps the originals; the compacted view shows placeholders
    assert [m.message for m in after.conversation] == [m.message for m in before.conversation]
    shown = {m.id: m.message.content for m in after.compacted}
    assert {shown[m.id] for m in pruned} == {PLACEHOLDER["en"]}
    assert [m.id for m in after.compacted] == [m.id for m in before.compacted]
    assert (
        done.tokens_after
        == estimate_view(runtime, after)
        < runtime.settings.compaction_config().threshold_tokens
    )
    update = h.events()[-1]
    assert isinstance(update, TokenUpdate) and update.current.api_calls == 0
