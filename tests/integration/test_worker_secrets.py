"""Secrets in and around the worker job: a channel's key never leaks into events, run records,
tables, logs, reprs or tracebacks; secrets in the transcript never reach the model nor the
summary (docs/architecture.md, "The algorithm", "Logs and metrics"). Same harness as
``test_worker_jobs.py``."""

from __future__ import annotations

import json
import logging
import secrets
import traceback
from dataclasses import replace
from typing import Any

import pytest
from sqlalchemy import Engine

from compaction.core.contract import CompactionDone
from compaction.core.errors import LlmError
from compaction.core.messages import Message
from compaction.service import logs
from compaction.worker.jobs import run
from tests.fakes import conversation
from tests.integration.helpers import snapshot
from tests.integration.worker_helpers import (
    PROVIDER_MODELS,
    SQLITE_ONLY,
    Harness,
    assert_failed,
    manual,
)
from tests.llm_server import DEFAULT_SUMMARY, Reply


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
    # logs, ours and the libraries': as JSON lines, as text, the records themselves
    assert any(r.getMessage() == "compaction job" for r in caplog.records)
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
CONFIG_PASSWORD = "hunter" + "2" * 10
SPELLED_KEY = "sk-" + "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY"
SECRETS = (ANTHROPIC_KEY, DB_PASSWORD, BEARER, "user:pw@host", CONFIG_PASSWORD, SPELLED_KEY[3:])


def secret_transcript() -> list[Message]:
    """Secrets in contents, and two that tool calls' arguments hold only escaped: a JSON config
    the agent writes (``\\"password\\": \\"...\\"`` in the raw arguments) and a key
    spelled ``\\u0073k-``."""
    messages = conversation(12)
    planted = {
        4: f"Use ANTHROPIC_API_KEY={ANTHROPIC_KEY} for the tests.",
        6: f"DATABASE_URL=postgres://user:{DB_PASSWORD}@host/db\nconnected as user",
        10: f"curl -H 'Authorization: Bearer {BEARER}' https://api.example.com/v1/items",
        12: f"the key is {ANTHROPIC_KEY} and the database postgres://user:pw@host/db",
    }
    for index, content in planted.items():
        messages[index] = replace(messages[index], content=content)
    config = json.dumps({"user": "app", "password": CONFIG_PASSWORD})
    written = json.dumps({"path": "conf.json", "content": config})
    spelled = '{"command": "echo \\u0073k-' + SPELLED_KEY[3:] + '"}'
    for index, arguments in ((6, written), (10, spelled)):  # assistant calls in the middle
        call = replace(messages[index].tool_calls[0], arguments=arguments)
        messages[index] = replace(messages[index], tool_calls=[call])
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
    assert "Please inspect directory" in sent and "conf.json" in sent  # the turns were sent
    for secret in SECRETS:
        assert secret not in sent, secret
    summary = h.store.latest_summary(session_id)
    assert summary is not None
    for secret in SECRETS:
        assert secret not in summary.message.content, secret
    assert [m.message for m in h.state(session_id).conversation if m.id != summary.id] == [
        m.message for m in full_before
    ]  # the originals stay whole in the database


URL_PASSWORD = "s3cret-" + "pw-42"
URL_KEY = "qk-" + "0123456789"


@SQLITE_ONLY
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_base_url_credentials_never_leak(
    h: Harness, caplog: pytest.LogCaptureFixture, provider: str
) -> None:
    caplog.set_level(logging.DEBUG)
    runtime = h.runtime(llm_max_retries=1)
    base_url = h.fake.url_for(provider).replace("://", f"://proxy-user:{URL_PASSWORD}@")
    h.store.add_channel(
        "proxied",
        provider=provider,
        model=PROVIDER_MODELS[provider][0],
        base_url=f"{base_url}?api_key={URL_KEY}",
        api_key="sk-test-0123456789abcdef0123456789abcdef",
        auxiliary=True,
        default=True,
    )
    # a proxy that echoes what it was asked for, credentials included
    h.script(Reply(status=502, error=f"bad gateway for {base_url}?api_key={URL_KEY}"))
    session_id = h.session(conversation(12))
    before = h.state(session_id)
    request = manual(session_id)

    final = run(runtime, request)

    failed = assert_failed(h, session_id, before, final, request, "llm_error")
    assert "502" in failed.error
    assert len(h.fake.requests) == 2
    shown = "".join(raw.decode() for raw in h.raw_events()) + _dump(h.store.runs(session_id))
    shown += _dump(h.store.resolve_auxiliary())
    for record in caplog.records:
        shown += logs.formatter().format(record) + _dump(record.__dict__)
    for secret in (URL_PASSWORD, URL_KEY):
        assert secret not in shown, secret
