"""The ``compaction_requested`` job end to end (DESIGN §1, §4, §6, §7): the real store (SQLite
and PostgreSQL), real Redis, and the real Anthropic/OpenAI SDKs talking over HTTP to a loopback
fake of the providers (``tests/llm_server.py``).

Each test asserts the final event (type and code), the run record, and on failure that the
compacted and full histories are exactly as before. Every event a test published is checked,
when the test ends, against the exported JSON Schema (``schemas/``) and a pydantic round trip.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

import pytest
from sqlalchemy import Engine
from structlog.testing import capture_logs

from compaction.contract import (
    CompactionDone,
    CompactionFailed,
    TokenUpdate,
)
from compaction.messages import SUMMARY_MARKER
from tests.fakes import conversation
from tests.integration.helpers import driver_error, failing
from tests.integration.worker_helpers import (
    CONTEXT_WINDOW,
    PROVIDER_MODELS,
    SQLITE_ONLY,
    Harness,
    assert_failed,
    assert_valid,
    estimate_view,
    header,
    manual,
)
from tests.llm_server import DEFAULT_SUMMARY, Recorded, Reply
from worker.jobs import compaction_requested, run
from worker.llm.base import max_tokens_for
from worker.runtime import install

pytestmark = pytest.mark.integration


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
    assert record.input_tokens == sent.size // 4  # what the fake reports
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
def test_fallback_follows_min_summary_chars(h: Harness) -> None:
    # The setting decides what is too short, for the fallback as for the engine.
    runtime = h.runtime(fallback_summary=True, min_summary_chars=5, llm_max_retries=0)
    h.channel("openai")
    h.script(Reply(text="too short"))
    session_id = h.session(conversation(12))

    done = run(runtime, manual(session_id))

    assert isinstance(done, CompactionDone), done
    summary = h.store.latest_summary(session_id)
    assert summary is not None and "\n\ntoo short\n\n" in summary.message.content
    [record] = h.store.runs(session_id)
    assert record.model != "extractive-fallback"


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


# --- invalid payloads through the RQ entry point --------------------------------------------


@SQLITE_ONLY
def test_invalid_payload_without_a_session_is_logged_not_published(h: Harness) -> None:
    install(h.runtime())

    with capture_logs() as logs:
        result = compaction_requested({"reason": "manual", "requestId": "r-1"})

    assert result["type"] == "compaction_failed"
    assert result["code"] == "invalid_request"
    assert "sessionId" in result["error"]
    assert h.raw_events() == []
    [record] = [r for r in logs if r["event"] == "invalid job"]
    assert record["log_level"] == "error"
    assert record["code"] == "invalid_request"
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


@SQLITE_ONLY
@pytest.mark.parametrize("cache_s", [5.0, 0.0])
def test_the_resolved_channel_is_reused_for_channel_cache_s(h: Harness, cache_s: float) -> None:
    # Resolving the channel cost each job two or three queries; a worker reuses it a while.
    runtime = h.runtime(channel_cache_s=cache_s)
    key_a, key_b = "sk-first-" + "a" * 32, "sk-second-" + "b" * 32
    h.channel("openai", name="first", api_key=key_a)
    assert run(runtime, manual(h.session(conversation(12)))).type == "compaction_done"
    h.channel("openai", name="second", api_key=key_b)  # the new default channel
    assert run(runtime, manual(h.session(conversation(12)))).type == "compaction_done"
    used = {k.lower(): v for k, v in h.fake.requests[-1].headers.items()}["authorization"]
    assert used == f"Bearer {key_a if cache_s else key_b}"
