"""The worker job's guarantees (DESIGN §1, §6, §7, §8): the lock, secrets, the exported JSON
Schemas and the metrics. Same harness as ``test_worker_jobs.py``."""

from __future__ import annotations

import json
import logging
import secrets
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import pytest
from prometheus_client import REGISTRY
from sqlalchemy import Engine
from structlog.testing import capture_logs

from cli.schemas import render
from compaction.contract import (
    CompactionDone,
    CompactionFailed,
    CompactionRequested,
    CompactionSkipped,
    json_schemas,
)
from compaction.errors import LlmError
from compaction.messages import Message
from service import logs
from service.keys import lock_key
from tests.fakes import conversation
from tests.integration.helpers import snapshot
from tests.integration.worker_helpers import (
    SCHEMAS,
    SQLITE_ONLY,
    Harness,
    assert_failed,
    assert_valid,
    auto,
    manual,
    on_llm_request,
    wait_until,
)
from tests.llm_server import DEFAULT_SUMMARY, Reply
from worker import jobs
from worker.jobs import run

pytestmark = pytest.mark.integration


# --- the lock (DESIGN §1, §7) ---------------------------------------------------------------


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

    with capture_logs() as entries:
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
    # logs: ours with their fields; the libraries' records, as JSON lines, as text, themselves
    assert entries and key not in _dump(entries)
    plain = logging.Formatter("%(name)s %(message)s")
    for record in caplog.records:
        assert key not in logs.formatter().format(record), record.name
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
def test_metrics_count_jobs_by_outcome_and_code(h: Harness) -> None:
    """Jobs run in this process add to its registry: one series per outcome and code."""
    series = [
        ("done", ""),
        ("failed", "summary_too_short"),
        ("skipped", "below_threshold"),
        ("skipped", "lock_held"),
    ]
    before = {(o, c): _sample("compaction_jobs_total", outcome=o, code=c) for o, c in series}
    skips = _sample("compaction_job_duration_seconds_count", outcome="skipped")
    saved = _sample("compaction_tokens_saved_total")
    runtime = h.runtime()
    h.channel("openai")
    big = h.session(conversation(12))
    small = h.session(conversation(12))
    held = h.session(conversation(12))

    done = run(runtime, manual(big))
    h.script(Reply(text=""))
    failed = run(runtime, manual(small))
    skipped = run(runtime, auto(small))
    h.redis.set(lock_key(h.namespace.prefix, held), "other-worker")
    busy = run(runtime, manual(held))
    assert isinstance(done, CompactionDone)
    assert isinstance(failed, CompactionFailed) and failed.code == "summary_too_short"
    assert isinstance(skipped, CompactionSkipped) and skipped.code == "below_threshold"
    assert isinstance(busy, CompactionSkipped) and busy.code == "lock_held"

    after = {(o, c): _sample("compaction_jobs_total", outcome=o, code=c) for o, c in series}
    assert {s: after[s] - before[s] for s in series} == dict.fromkeys(series, 1)
    assert _sample("compaction_job_duration_seconds_count", outcome="skipped") == skips + 2
    saving = done.tokens_before - done.tokens_after
    assert _sample("compaction_tokens_saved_total") == saved + saving


def _sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0
