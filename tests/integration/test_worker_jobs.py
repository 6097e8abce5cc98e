"""The ``compaction_requested`` job end to end (docs/architecture.md, "The job"): the real store
(SQLite and PostgreSQL), real Redis, and the real Anthropic/OpenAI SDKs talking over HTTP to a
loopback fake of the providers (``tests/llm_server.py``): a manual compaction with each
provider, the RQ entry point, the resolved channel reused. Failures: test_worker_failures.py;
invalid payloads: test_worker_payloads.py.

Each test asserts the final event (type and code) and the run record. Every event a test
published is checked, when the test ends, against the exported JSON Schema (``schemas/``) and a
pydantic round trip (the ``h`` fixture).
"""

from __future__ import annotations

import json
import secrets

import pytest

from compaction.core.contract import (
    AnyEvent,
    CompactionDone,
    CompactionRequested,
    TokenUpdate,
    TokenUsage,
)
from compaction.core.messages import SUMMARY_MARKER
from compaction.service.usage import remember_usage
from compaction.worker.jobs import compaction_requested, run
from compaction.worker.llm.base import max_tokens_for
from compaction.worker.runtime import Runtime, install
from tests.fakes import conversation
from tests.integration.worker_helpers import (
    CONTEXT_WINDOW,
    PROVIDER_MODELS,
    SQLITE_ONLY,
    Harness,
    History,
    estimate_view,
    header,
    manual,
)
from tests.llm_server import DEFAULT_SUMMARY, Recorded

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
    # what the gateway last reported of the user's model (publish_token_update(usage=...))
    usage = TokenUsage(input_tokens=3_100, output_tokens=420, total_tokens=3_520, api_calls=7)
    remember_usage(h.redis, h.namespace.prefix, session_id, usage)

    done = run(runtime, request)

    assert isinstance(done, CompactionDone), done
    [sent] = h.fake.requests
    assert_request_shape(sent, provider, model, key)

    # events: start, done, token_update, in that order, all about this request
    events = h.events()
    assert [e.type for e in events] == ["compaction_start", "compaction_done", "token_update"]
    assert events[1].to_wire() == done.to_wire()
    # every worker run compacts the history segment, and says so on its start and done
    assert [getattr(e, "stage", None) for e in events] == ["history", "history", None]
    for event in events:
        assert (event.session_id, event.request_id, event.reason) == (
            session_id,
            request.request_id,
            "manual",
        )

    assert_run_record(h, runtime, request, done, sent, model)
    assert_history_compacted(h, runtime, before, done)
    assert_token_update(events[2], usage, done)
    assert h.lock_value(session_id) is None


def assert_run_record(
    h: Harness,
    runtime: Runtime,
    request: CompactionRequested,
    done: CompactionDone,
    sent: Recorded,
    model: str,
) -> None:
    """The run record, with the provider's usage."""
    [record] = h.store.runs(request.session_id)
    assert (record.status, record.code, record.error) == ("succeeded", None, None)
    assert (record.request_id, record.reason, record.model) == (request.request_id, "manual", model)
    assert record.id == done.run_id
    assert record.summary_message_id == done.summary_message_id
    assert record.removed_count == done.removed_count
    assert (record.tokens_before, record.tokens_after) == (done.tokens_before, done.tokens_after)
    assert record.input_tokens == sent.size // 4  # what the fake reports
    assert record.output_tokens == len(DEFAULT_SUMMARY) // 4
    assert record.worker == runtime.name


def assert_history_compacted(
    h: Harness, runtime: Runtime, before: History, done: CompactionDone
) -> None:
    """The summary replaces exactly removedCount rows; nothing is deleted; the UI's event rows
    are in the full view only."""
    after = h.state(done.session_id)
    summary = h.store.latest_summary(done.session_id)
    assert summary is not None and summary.id == done.summary_message_id
    assert summary.message.content.startswith(SUMMARY_MARKER)
    assert "Keep the agent working on the task." in summary.message.content
    replaced = [m for m in after.conversation if m.compacted_into_id == summary.id]
    assert len(replaced) == done.removed_count > 0
    assert len(after.conversation) == len(before.conversation) + 1
    assert [m.id for m in after.compacted].count(summary.id) == 1
    assert done.tokens_before == estimate_view(runtime, before)
    assert done.tokens_after == estimate_view(runtime, after) < done.tokens_before

    assert after.event_kinds == ["start", "done"]
    assert not any(m.is_event for m in after.compacted)
    done_row = after.events[1].metadata or {}
    assert done_row["runId"] == done.run_id
    assert done_row["summaryMessageId"] == done.summary_message_id
    assert done_row["removedCount"] == done.removed_count


def assert_token_update(update: AnyEvent, usage: TokenUsage, done: CompactionDone) -> None:
    """The token_update after a job: the user's model usage as the gateway reported it (not
    the auxiliary model's), the context after it, the session's one standing compaction."""
    assert isinstance(update, TokenUpdate)
    assert update.current == usage
    assert update.context.compactions == 1
    assert update.context.used_tokens == done.tokens_after
    assert update.context.max_tokens == CONTEXT_WINDOW
    assert update.context.threshold_percent == 70
    assert update.context.percent == round(100 * done.tokens_after / CONTEXT_WINDOW, 1)


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
