"""The ``compaction_requested`` job end to end (DESIGN §1, §4, §6, §7): the real store (SQLite
and PostgreSQL), real Redis, and the real Anthropic/OpenAI SDKs talking over HTTP to a loopback
fake of the providers (``tests/llm_server.py``).

Each test asserts the final event (type and code), the run record, and on failure that the
compacted and full histories are exactly as before. Every event a test published is checked,
when the test ends, against the exported JSON Schema (``schemas/``) and a pydantic round trip.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import pytest
import redis
from sqlalchemy import Engine

from compaction import estimate_messages_tokens
from compaction.contract import (
    CompactionDone,
    CompactionFailed,
    CompactionRequested,
    CompactionSkipped,
    TokenUpdate,
    json_schemas,
    lock_key,
    parse_event,
)
from compaction.errors import LlmError
from compaction.messages import SUMMARY_MARKER, Message
from compaction.pruning import PLACEHOLDER
from store import Store
from tests.fakes import conversation
from tests.integration.helpers import driver_error, failing, snapshot
from tests.integration.worker_helpers import (
    CONTEXT_WINDOW,
    PROVIDER_MODELS,
    REDIS_URL,
    SCHEMAS,
    Harness,
    History,
    assert_valid,
)
from tests.llm_server import DEFAULT_SUMMARY, FakeLLM, Recorded, Reply, serve
from worker import jobs
from worker.cli.schemas import render
from worker.jobs import compaction_requested, run
from worker.llm.base import max_tokens_for
from worker.logs import JsonFormatter
from worker.metrics import RedisCollector
from worker.runtime import Runtime, install

pytestmark = pytest.mark.integration

#: Where the database plays no part (the LLM side of a job), SQLite alone keeps the file fast.
SQLITE_ONLY = pytest.mark.parametrize("engine", ["sqlite"], indirect=True)


@pytest.fixture(scope="session")
def fake_llm() -> Iterator[FakeLLM]:
    with serve() as fake:
        yield fake


@pytest.fixture
def redis_db() -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(REDIS_URL)
    client.flushdb()
    yield client
    client.flushdb()
    client.close()


@pytest.fixture
def h(store: Store, engine: Engine, redis_db: redis.Redis, fake_llm: FakeLLM) -> Iterator[Harness]:
    fake_llm.script(Reply())
    harness = Harness(store, engine, redis_db, fake_llm)
    yield harness
    install(None)
    # Every event a job published in this test matches the exported JSON Schemas (DESIGN §6).
    for wire in harness.wire_events():
        assert_valid(wire, "event.schema.json")
        assert_valid(wire, f"{wire['type']}.schema.json")
        assert parse_event(wire).to_wire() == wire


def manual(session_id: str, **fields: Any) -> CompactionRequested:
    return CompactionRequested(session_id=session_id, reason="manual", **fields)


def auto(session_id: str, **fields: Any) -> CompactionRequested:
    return CompactionRequested(session_id=session_id, reason="auto", **fields)


def header(recorded: Recorded, name: str) -> str | None:
    return {k.lower(): v for k, v in recorded.headers.items()}.get(name)


def estimate_view(runtime: Runtime, view: History) -> int:
    config = runtime.settings.compaction_config()
    return estimate_messages_tokens([m.message for m in view.compacted], config.estimator())


def assert_failed(
    h: Harness,
    session_id: str,
    before: History,
    final: object,
    request: CompactionRequested,
    code: str,
) -> CompactionFailed:
    """A failure: its event (after a start), one failed run with the same text, the history as
    it was (two UI event rows aside), no summary, the lock released."""
    assert isinstance(final, CompactionFailed), final
    assert final.code == code, final.error
    events = h.events(session_id)
    assert [e.type for e in events] == ["compaction_start", "compaction_failed"]
    assert events[-1].to_wire() == final.to_wire()
    assert (final.request_id, final.reason) == (request.request_id, request.reason)
    [record] = h.store.runs(session_id)
    assert (record.status, record.code, record.error) == ("failed", code, final.error)
    assert (record.request_id, record.reason) == (request.request_id, request.reason)
    after = h.state(session_id)
    assert after.unchanged_since(before)
    assert after.event_kinds == ["start", "failed"]
    assert not any(m.is_event for m in after.compacted)
    assert h.store.latest_summary(session_id) is None
    assert h.lock_value(session_id) is None
    return final


# --- success, with each provider -----------------------------------------------------------

SUCCESS_CASES = [
    ("anthropic", "claude-sonnet-4-5"),
    ("anthropic", "claude-opus-4-6"),  # a model that fixes its own sampling: no temperature
    ("openai", "gpt-4o-mini"),
    ("openai", "o3-mini"),  # a reasoning model: max_completion_tokens, no temperature
    ("deepseek", "deepseek-chat"),
    ("openai-compatible", "qwen2.5-7b-instruct"),
]


def assert_request_shape(sent: Recorded, provider: str, model: str, key: str) -> None:
    body = sent.body
    assert sent.path == PROVIDER_MODELS[provider][1]
    assert body["model"] == model
    [message] = body["messages"]
    assert message["role"] == "user"
    # the prompt quotes the turns as material, never as instructions
    assert "Please inspect directory /srv/" in json.dumps(message["content"])
    # manual request on a small middle: the budget is summary_min_tokens (2000)
    expected_max = max_tokens_for(2_000)
    if provider == "anthropic":
        # the SDK authenticates with x-api-key or, in current versions, a bearer token
        assert key in (header(sent, "x-api-key"), (header(sent, "authorization") or "")[7:])
        assert body["max_tokens"] == expected_max
        assert body["thinking"] == {"type": "disabled"}
        if model == "claude-sonnet-4-5":
            assert body["temperature"] == 0.3
        else:
            assert "temperature" not in body
        return
    assert header(sent, "authorization") == f"Bearer {key}"
    if model == "o3-mini":
        assert body["max_completion_tokens"] == expected_max
        assert "max_tokens" not in body and "temperature" not in body
    else:
        assert body["max_tokens"] == expected_max
        assert body["temperature"] == 0.3
        assert "max_completion_tokens" not in body
    if provider == "deepseek":
        assert body["thinking"] == {"type": "disabled"}
    else:
        assert "thinking" not in body


@pytest.mark.parametrize(("provider", "model"), SUCCESS_CASES)
def test_manual_compaction_succeeds_with_each_provider(
    h: Harness, provider: str, model: str
) -> None:
    key = f"sk-test-{secrets.token_hex(16)}"
    runtime = h.runtime()
    h.channel(provider, model, api_key=key)
    session_id = h.session(conversation(12))
    before = h.state(session_id)
    request = manual(session_id)

    done = run(runtime, request)

    assert isinstance(done, CompactionDone), done
    [sent] = h.fake.requests
    assert_request_shape(sent, provider, model, key)

    # events: start, done, token_update, in that order, all about this request
    events = h.events()
    assert [e.type for e in events] == ["compaction_start", "compaction_done", "token_update"]
    assert events[1].to_wire() == done.to_wire()
    for event in events:
        assert (event.session_id, event.request_id, event.reason) == (
            session_id,
            request.request_id,
            "manual",
        )

    # the run record, with the provider's usage
    [record] = h.store.runs(session_id)
    assert (record.status, record.code, record.error) == ("succeeded", None, None)
    assert (record.request_id, record.reason, record.model) == (request.request_id, "manual", model)
    assert record.id == done.run_id
    assert record.summary_message_id == done.summary_message_id
    assert record.removed_count == done.removed_count
    assert (record.tokens_before, record.tokens_after) == (done.tokens_before, done.tokens_after)
    assert record.input_tokens == len(json.dumps(sent.body)) // 4  # what the fake reports
    assert record.output_tokens == len(DEFAULT_SUMMARY) // 4
    assert record.worker == runtime.name

    # the history: the summary replaces exactly removedCount rows; nothing is deleted
    after = h.state(session_id)
    summary = h.store.latest_summary(session_id)
    assert summary is not None and summary.id == done.summary_message_id
    assert summary.message.content.startswith(SUMMARY_MARKER)
    assert "Keep the agent working on the task." in summary.message.content
    replaced = [m for m in after.conversation if m.compacted_into_id == summary.id]
    assert len(replaced) == done.removed_count > 0
    assert len(after.conversation) == len(before.conversation) + 1
    assert [m.id for m in after.compacted].count(summary.id) == 1
    assert done.tokens_before == estimate_view(runtime, before)
    assert done.tokens_after == estimate_view(runtime, after) < done.tokens_before

    # the UI's event rows: in the full view only
    assert after.event_kinds == ["start", "done"]
    assert not any(m.is_event for m in after.compacted)
    done_row = after.events[1].metadata or {}
    assert done_row["runId"] == done.run_id
    assert done_row["summaryMessageId"] == done.summary_message_id
    assert done_row["removedCount"] == done.removed_count

    update = events[2]
    assert isinstance(update, TokenUpdate)
    assert update.current.input_tokens == record.input_tokens
    assert update.current.output_tokens == record.output_tokens
    assert update.current.total_tokens == record.input_tokens + record.output_tokens
    assert update.current.api_calls == 1
    assert update.context.used_tokens == done.tokens_after
    assert update.context.max_tokens == CONTEXT_WINDOW
    assert update.context.threshold_percent == 70
    assert update.context.percent == round(100 * done.tokens_after / CONTEXT_WINDOW, 1)
    assert h.lock_value(session_id) is None


@SQLITE_ONLY
def test_rq_entry_point_returns_the_final_event_as_json(h: Harness) -> None:
    install(h.runtime())
    h.channel()
    session_id = h.session(conversation(12))
    request = manual(session_id, focus="keep the directory names")

    result = compaction_requested(json.loads(request.to_json()))

    assert result["type"] == "compaction_done"
    assert json.loads(json.dumps(result)) == result  # RQ's JSON serializer stores it
    assert result == h.wire_events()[1]
    assert "keep the directory names" in h.fake.bodies_text()  # the focus steers the summary


# --- failures: the history stays as it was ---------------------------------------------------

LLM_FAILURES: dict[str, tuple[dict[str, Any], str, list[Reply], str, int, str]] = {
    # name: (settings, provider, replies, code, requests made, text in the error)
    "timeout": (
        {"llm_timeout_s": 0.5, "llm_max_retries": 1},
        "openai",
        [Reply(delay_s=1.5)],
        "llm_timeout",
        2,
        "timed out",
    ),
    "500": ({"llm_max_retries": 2}, "openai", [Reply(status=500)], "llm_error", 3, "500"),
    "529": ({"llm_max_retries": 1}, "anthropic", [Reply(status=529)], "llm_error", 2, "529"),
    "429": ({"llm_max_retries": 1}, "deepseek", [Reply(status=429)], "llm_error", 2, "429"),
    "empty_summary": ({}, "anthropic", [Reply(text="")], "summary_too_short", 1, "characters"),
    "short_summary": (
        {},
        "openai",
        [Reply(text="## Goal\nKeep going.")],
        "summary_too_short",
        1,
        "under the minimum of 200",
    ),
}


@SQLITE_ONLY
@pytest.mark.parametrize("case", list(LLM_FAILURES))
def test_auxiliary_model_failure_changes_nothing(h: Harness, case: str) -> None:
    settings, provider, replies, code, requests, text = LLM_FAILURES[case]
    runtime = h.runtime(**settings)
    h.channel(provider)
    h.script(*replies)
    session_id = h.session(conversation(12))
    before = h.state(session_id)
    request = manual(session_id)

    final = run(runtime, request)

    failed = assert_failed(h, session_id, before, final, request, code)
    assert text in failed.error
    assert len(h.fake.requests) == requests


@SQLITE_ONLY
def test_no_auxiliary_channel_fails_without_calling_a_model(h: Harness) -> None:
    runtime = h.runtime()
    h.store.add_channel("main", provider="openai", model="gpt-4o", base_url=h.fake.base_url)
    session_id = h.session(conversation(12))
    before = h.state(session_id)
    request = manual(session_id)

    final = run(runtime, request)

    assert_failed(h, session_id, before, final, request, "no_auxiliary_model")
    assert h.fake.requests == []


def test_database_failure_during_the_write_changes_nothing(h: Harness, engine: Engine) -> None:
    runtime = h.runtime()
    h.channel("openai")
    session_id = h.session(conversation(12))
    before = h.state(session_id)
    request = manual(session_id)

    with failing(
        engine,
        lambda s: s.is_update_of("message", "compacted_at"),
        error=lambda: driver_error(engine, "connection lost"),
    ):
        final = run(runtime, request)

    failed = assert_failed(h, session_id, before, final, request, "db_error")
    assert failed.error == "database error: connection lost"  # no statement, no values

    # the session is not stuck: the next request compacts it
    retry = manual(session_id)
    done = run(runtime, retry)
    assert isinstance(done, CompactionDone), done
    assert [(r.status, r.code) for r in h.store.runs(session_id)] == [
        ("failed", "db_error"),
        ("succeeded", None),
    ]
    assert h.store.latest_summary(session_id) is not None
    assert h.state(session_id).event_kinds == ["start", "failed", "start", "done"]


# --- the opt-in extractive fallback (DESIGN §4) ----------------------------------------------


@SQLITE_ONLY
@pytest.mark.parametrize(
    "reply", [Reply(status=500), Reply(text="too short")], ids=["500", "short"]
)
def test_fallback_summary_when_enabled(h: Harness, reply: Reply) -> None:
    runtime = h.runtime(fallback_summary=True, llm_max_retries=0)
    h.channel("openai")
    h.script(reply)
    session_id = h.session(conversation(12))

    done = run(runtime, manual(session_id))

    assert isinstance(done, CompactionDone), done
    assert len(h.fake.requests) == 1
    summary = h.store.latest_summary(session_id)
    assert summary is not None and summary.id == done.summary_message_id
    assert "Extractive" in summary.message.content
    [record] = h.store.runs(session_id)
    assert (record.status, record.model) == ("succeeded", "extractive-fallback")


@SQLITE_ONLY
def test_fallback_is_off_by_default(h: Harness) -> None:
    runtime = h.runtime(llm_max_retries=0)
    assert runtime.settings.fallback_summary is False
    h.channel("openai")
    h.script(Reply(status=500))
    session_id = h.session(conversation(12))
    before = h.state(session_id)
    request = manual(session_id)

    assert_failed(h, session_id, before, run(runtime, request), request, "llm_error")


# --- one session, two requests at once ---------------------------------------------------------


def test_manual_and_auto_at_once_one_runs_one_is_skipped(h: Harness) -> None:
    runtime = h.runtime(llm_timeout_s=3.0, llm_max_retries=0)
    h.channel("openai")
    h.script(Reply(delay_s=1.0))  # the first holds the lock while the second arrives
    session_id = h.session(conversation(40, tool_chars=100))  # over the threshold
    requests = [manual(session_id), auto(session_id)]
    barrier = threading.Barrier(len(requests))
    results: dict[str, object] = {}

    def go(request: CompactionRequested) -> None:
        barrier.wait()
        results[request.reason] = run(runtime, request)

    threads = [threading.Thread(target=go, args=(r,)) for r in requests]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)

    finals = sorted(results.values(), key=lambda e: type(e).__name__)
    assert [type(e) for e in finals] == [CompactionDone, CompactionSkipped]
    done, skipped = finals
    assert isinstance(skipped, CompactionSkipped) and skipped.code == "lock_held"
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


# --- anti-loop and the auto triggers (DESIGN §4) -------------------------------------------


def _weak_runs(h: Harness, runtime: Runtime, session_id: str, count: int = 2) -> int:
    """Record ``count`` succeeded runs that each saved ~1%, ending at today's size."""
    now = estimate_view(runtime, h.state(session_id))
    for _ in range(count):
        version = h.store.get_session(session_id).compaction_version
        h.store.apply_pruning(
            session_id,
            expected_version=version,
            pruned_ids=[],
            tokens_before=now + now // 100,
            tokens_after=now,
        )
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


# --- invalid payloads through the RQ entry point --------------------------------------------


@SQLITE_ONLY
def test_invalid_payload_without_a_session_is_logged_not_published(
    h: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    install(h.runtime())
    caplog.set_level(logging.INFO)

    result = compaction_requested({"reason": "manual", "requestId": "r-1"})

    assert result["type"] == "compaction_failed"
    assert result["code"] == "invalid_request"
    assert "sessionId" in result["error"]
    assert h.raw_events() == []
    [record] = [r for r in caplog.records if r.name == "compaction.job"]
    assert record.levelno == logging.ERROR
    assert record.fields["code"] == "invalid_request"  # type: ignore[attr-defined]
    assert_valid(result, "event.schema.json")


@SQLITE_ONLY
def test_invalid_payload_with_a_readable_session_is_published(h: Harness) -> None:
    install(h.runtime())
    session_id = h.session(conversation(12))
    before = h.state(session_id)

    result = compaction_requested({"sessionId": session_id, "reason": "later", "requestId": "r-2"})

    [event] = h.events()
    assert isinstance(event, CompactionFailed)
    assert (event.session_id, event.request_id, event.code) == (
        session_id,
        "r-2",
        "invalid_request",
    )
    assert "reason" in event.error
    assert result == event.to_wire()
    assert h.state(session_id) == before
    assert h.fake.requests == []


GARBAGE: list[object] = [
    None,
    [],
    "compact please",
    42,
    {},
    {"sessionId": 7, "reason": "manual"},
    {"sessionId": "", "reason": "manual"},
    {"sessionId": "s" * 129, "reason": "manual"},
    {"sessionId": "s1", "reason": "manual", "contextWindow": 10},
    {"sessionId": "s1", "reason": "manual", "focus": "f" * 2_001},
    {"sessionId": "s1", "reason": "manual", "unknown": True},
    {"sessionId": "s1", "reason": "manual", "requestId": ""},
    {"sessionId": "s1", "reason": "manual", "v": 2},
    {"sessionId": "s1", "reason": "manual", "requestedAt": "yesterday"},
]


@SQLITE_ONLY
@pytest.mark.parametrize("payload", GARBAGE, ids=range(len(GARBAGE)))
def test_invalid_payload_never_raises(h: Harness, payload: Any) -> None:
    install(h.runtime())

    result = compaction_requested(payload)

    assert result["type"] == "compaction_failed" and result["code"] == "invalid_request"
    assert_valid(result, "event.schema.json")
    assert h.fake.requests == []


@SQLITE_ONLY
def test_unknown_session_fails_with_session_not_found(h: Harness) -> None:
    install(h.runtime())

    result = compaction_requested(manual("no-such-session").to_wire())

    assert (result["type"], result["code"]) == ("compaction_failed", "session_not_found")
    assert [e.type for e in h.events("no-such-session")] == ["compaction_failed"]


# --- the lock (DESIGN §1, §7) ---------------------------------------------------------------


def when_llm_called(fake: FakeLLM, action: Callable[[], object]) -> threading.Thread:
    """Run ``action`` from another thread as soon as the fake receives a request."""

    def watch() -> None:
        deadline = time.monotonic() + 5
        while not fake.requests and time.monotonic() < deadline:
            time.sleep(0.005)
        action()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def test_lock_taken_over_mid_run_writes_nothing(h: Harness) -> None:
    runtime = h.runtime(llm_timeout_s=3.0, llm_max_retries=0)
    h.channel("openai")
    h.script(Reply(delay_s=0.5))
    session_id = h.session(conversation(12))
    before = h.state(session_id)
    request = manual(session_id)
    key = lock_key("compaction", session_id)
    watcher = when_llm_called(h.fake, lambda: h.redis.set(key, "intruder", px=30_000))

    final = run(runtime, request)
    watcher.join()

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
    runtime = h.runtime(lock_ttl_s=0.3, llm_timeout_s=3.0, llm_max_retries=0)
    h.channel("openai")
    h.script(Reply(delay_s=0.8))
    session_id = h.session(conversation(12))
    before = h.state(session_id)
    request = manual(session_id)

    final = run(runtime, request)

    assert_failed(h, session_id, before, final, request, "lock_lost")


@SQLITE_ONLY
def test_heartbeat_keeps_the_lock_through_a_slow_model(h: Harness) -> None:
    runtime = h.runtime(lock_ttl_s=0.6, llm_timeout_s=3.0, llm_max_retries=0)
    h.channel("openai")
    h.script(Reply(delay_s=1.5))  # 2.5 TTLs
    session_id = h.session(conversation(12))
    held: list[bool] = []

    def look() -> None:
        time.sleep(1.0)
        held.append(h.lock_value(session_id) is not None)

    watcher = when_llm_called(h.fake, look)

    done = run(runtime, manual(session_id))
    watcher.join()

    assert isinstance(done, CompactionDone), done
    assert held == [True]
    assert h.lock_value(session_id) is None


# --- secrets (DESIGN §4, §5, §7) -------------------------------------------------------------


def _dump(value: Any) -> str:
    return repr(value)


KEY_SHAPES = {
    "sk_test": lambda: f"sk-test-{secrets.token_urlsafe(24)[:32]}",
    # a key no redaction pattern knows: only the channel's own scrubber can catch it
    "opaque": lambda: secrets.token_hex(20),
}


@SQLITE_ONLY
@pytest.mark.parametrize("shape", list(KEY_SHAPES))
@pytest.mark.parametrize(("provider", "status"), [("openai", 401), ("anthropic", 500)])
def test_channel_key_never_leaks(
    h: Harness,
    engine: Engine,
    caplog: pytest.LogCaptureFixture,
    shape: str,
    provider: str,
    status: int,
) -> None:
    key = KEY_SHAPES[shape]()
    caplog.set_level(logging.DEBUG)
    runtime = h.runtime(llm_max_retries=1)
    channel = h.channel(provider, api_key=key)
    h.script(Reply(status=status, error=f"Incorrect API key provided: {key}. Key {key} revoked"))
    session_id = h.session(conversation(12))
    before = h.state(session_id)
    request = manual(session_id)

    final = run(runtime, request)

    failed = assert_failed(h, session_id, before, final, request, "llm_error")
    assert str(status) in failed.error
    assert "[REDACTED]" in failed.error
    assert key in json.dumps(h.fake.requests[0].headers)  # it was sent where it belongs
    # events, run records, event rows, every table but the channel's own
    assert key not in "".join(raw.decode() for raw in h.raw_events())
    assert key not in _dump(h.store.runs(session_id))
    assert key not in _dump(h.state(session_id))
    rows = snapshot(engine)
    rows.pop("model_channel")
    assert key not in _dump(rows)
    # logs: messages, structured fields, the JSON formatter's lines, the records themselves
    plain = logging.Formatter("%(name)s %(message)s")
    for record in caplog.records:
        assert key not in JsonFormatter().format(record), record.name
        assert key not in plain.format(record), record.name
        assert key not in _dump(record.__dict__), record.name
    # the resolved channel and client never show it either
    assert key not in repr(channel) and key not in str(channel)
    assert key not in repr(runtime.client_for(h.store.resolve_auxiliary()))
    # nor does the error the client raises
    with pytest.raises(LlmError) as raised:
        runtime.client_for(h.store.resolve_auxiliary()).complete("hello", 100)
    assert key not in str(raised.value) and key not in repr(raised.value)


@SQLITE_ONLY
def test_llm_error_traceback_holds_no_key(h: Harness) -> None:
    key = secrets.token_hex(20)
    runtime = h.runtime(llm_max_retries=0)
    h.channel("openai", api_key=key)
    h.script(Reply(status=401, error=f"Incorrect API key provided: {key}"))

    with pytest.raises(LlmError) as raised:
        runtime.client_for(h.store.resolve_auxiliary()).complete("hello", 100)

    assert key not in "".join(traceback.format_exception(raised.value))


ANTHROPIC_KEY = "sk-ant-api03-" + "Zx9" * 30
DB_PASSWORD = "pw-" + "Q7" * 10
BEARER = "tok" + "9aF" * 8


def secret_transcript() -> list[Message]:
    messages = conversation(12)
    planted = {
        4: f"Use ANTHROPIC_API_KEY={ANTHROPIC_KEY} for the tests.",
        6: f"DATABASE_URL=postgres://user:{DB_PASSWORD}@host/db\nconnected as user",
        10: f"curl -H 'Authorization: Bearer {BEARER}' https://api.example.com/v1/items",
        12: f"the key is {ANTHROPIC_KEY} and the database postgres://user:pw@host/db",
    }
    for index, content in planted.items():
        messages[index] = replace(messages[index], content=content)
    return messages


@SQLITE_ONLY
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_secrets_in_the_transcript_never_reach_the_model(h: Harness, provider: str) -> None:
    runtime = h.runtime()
    h.channel(provider)
    # the model writes a secret back: its output is redacted too
    h.script(Reply(text=DEFAULT_SUMMARY + f"\nThe key was {ANTHROPIC_KEY}.\n"))
    session_id = h.session(secret_transcript())
    full_before = h.store.load_history(session_id, "full")
    assert ANTHROPIC_KEY in _dump(full_before)

    done = run(runtime, manual(session_id))

    assert isinstance(done, CompactionDone), done
    sent = h.fake.bodies_text()
    assert "Please inspect directory" in sent  # the turns were sent
    for secret in (ANTHROPIC_KEY, DB_PASSWORD, BEARER, "user:pw@host"):
        assert secret not in sent, secret
    summary = h.store.latest_summary(session_id)
    assert summary is not None
    for secret in (ANTHROPIC_KEY, DB_PASSWORD, BEARER, "user:pw@host"):
        assert secret not in summary.message.content, secret
    assert [m.message for m in h.state(session_id).conversation if m.id != summary.id] == [
        m.message for m in full_before
    ]  # the originals stay whole in the database


# --- the exported JSON Schemas (DESIGN §6) ----------------------------------------------------


def test_schema_files_are_up_to_date() -> None:
    expected = json_schemas()
    assert sorted(p.name for p in SCHEMAS.glob("*.json")) == sorted(expected)
    for name, schema in expected.items():
        assert (SCHEMAS / name).read_text(encoding="utf-8") == render(schema), (
            f"schemas/{name} is stale: run `compaction schemas`"
        )


@pytest.mark.parametrize(
    "request_",
    [
        CompactionRequested(session_id="s1", reason="auto"),
        CompactionRequested(
            session_id="s" * 128,
            reason="manual",
            request_id="r" * 64,
            model="gpt-4o",
            context_window=128_000,
            focus="keep the schema",
        ),
    ],
    ids=["minimal", "full"],
)
def test_job_payload_matches_its_schema(request_: CompactionRequested) -> None:
    wire = request_.to_wire()
    assert_valid(wire, "compaction_requested.schema.json")
    assert CompactionRequested.model_validate(wire).to_wire() == wire
    assert_valid(json.loads(request_.to_json()), "compaction_requested.schema.json")


def test_schema_checker_refuses_bad_events() -> None:
    """The checker the teardown relies on does refuse what the schema forbids."""
    good = CompactionSkipped(session_id="s1", code="lock_held").to_wire()
    assert_valid(good, "event.schema.json")
    for bad in (
        {**good, "code": "nope"},
        {**good, "v": 2},
        {**good, "extra": 1},
        {k: v for k, v in good.items() if k != "sessionId"},
        {**good, "type": "compaction_paused"},
        {**good, "timestamp": "soon"},
    ):
        with pytest.raises(AssertionError):
            assert_valid(bad, "event.schema.json")


# --- metrics (DESIGN §8) ----------------------------------------------------------------------


@SQLITE_ONLY
def test_metrics_count_jobs_by_outcome(h: Harness) -> None:
    runtime = h.runtime()
    h.channel("openai")
    big = h.session(conversation(12))
    small = h.session(conversation(12))
    held = h.session(conversation(12))

    done = run(runtime, manual(big))
    h.script(Reply(text=""))
    failed = run(runtime, manual(small))
    skipped = run(runtime, auto(small))
    h.redis.set(lock_key("compaction", held), "other-worker")
    busy = run(runtime, manual(held))
    assert isinstance(done, CompactionDone)
    assert isinstance(failed, CompactionFailed) and failed.code == "summary_too_short"
    assert isinstance(skipped, CompactionSkipped) and skipped.code == "below_threshold"
    assert isinstance(busy, CompactionSkipped) and busy.code == "lock_held"

    jobs_metric, duration, saved = RedisCollector(h.redis, "compaction").collect()
    counts = {
        s.labels["outcome"]: s.value for s in jobs_metric.samples if s.name.endswith("_total")
    }
    assert counts == {
        "done": 1,
        "failed:summary_too_short": 1,
        "skipped:below_threshold": 1,
        "skipped:lock_held": 1,
    }
    samples = {(s.name, s.labels.get("le")): s.value for s in duration.samples}
    assert samples[("compaction_job_duration_seconds_count", None)] == 4
    assert samples[("compaction_job_duration_seconds_bucket", "+Inf")] == 4
    assert 0 < samples[("compaction_job_duration_seconds_sum", None)] < 30
    buckets = [v for (name, _le), v in samples.items() if name.endswith("_bucket")]
    assert buckets == sorted(buckets)
    [total] = saved.samples
    assert total.value == done.tokens_before - done.tokens_after
