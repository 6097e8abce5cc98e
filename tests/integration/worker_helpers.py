"""Helpers for the job's integration tests (``test_worker_jobs.py``): a harness that builds a
``Runtime`` over the ``store`` fixture (SQLite or real PostgreSQL), the shared Redis (a namespace
of the test's own) and the loopback fake LLM server, plus readers for what a job leaves behind
(events on the stream, run records, the two history views) and a small JSON Schema checker for
the exported files.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import jsonschema
import pytest
import redis
from sqlalchemy import Engine

from compaction import estimate_messages_tokens
from compaction.core.contract import (
    AnyEvent,
    CompactionDone,
    CompactionFailed,
    CompactionRequested,
    parse_event,
)
from compaction.core.messages import Message
from compaction.service.events import EventPublisher
from compaction.service.keys import events_stream, lock_key
from compaction.service.settings import Settings
from compaction.store import ChannelConfig, Store, StoredMessage
from compaction.worker.runtime import Runtime
from tests.llm_server import FakeLLM, Recorded, Reply
from tests.services import RedisNamespace, stream_entries

T = TypeVar("T")
SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"
#: Small enough that ``conversation(12)`` compacts with a manual request (the size of the
#: integration case in docs/architecture.md, "Tests").
CONTEXT_WINDOW = 4_000

#: provider → (a model, the path its SDK posts to)
PROVIDER_MODELS: dict[str, tuple[str, str]] = {
    "anthropic": ("claude-sonnet-4-5", "/v1/messages"),
    "openai": ("gpt-4o-mini", "/v1/chat/completions"),
    "deepseek": ("deepseek-chat", "/v1/chat/completions"),
    "openai-compatible": ("qwen2.5-7b-instruct", "/v1/chat/completions"),
}


def job_settings(database_url: str, namespace: RedisNamespace, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "database_url": database_url,
        **namespace.settings(),
        "context_window": CONTEXT_WINDOW,
        "lock_ttl_s": 2.0,
        "llm_timeout_s": 1.0,
        "llm_max_retries": 1,
    }
    values.update(overrides)
    if "job_timeout_s" not in overrides:
        needed = values["llm_timeout_s"] * (values["llm_max_retries"] + 1)
        values["job_timeout_s"] = max(5, math.ceil(needed) + 1)
    return Settings(**values)


@dataclass
class Harness:
    store: Store
    engine: Engine
    redis: redis.Redis
    namespace: RedisNamespace
    fake: FakeLLM
    runtimes: list[Runtime] = field(default_factory=list)

    @property
    def database_url(self) -> str:
        return self.engine.url.render_as_string(hide_password=False)

    def runtime(self, **overrides: Any) -> Runtime:
        settings = job_settings(self.database_url, self.namespace, **overrides)
        publisher = EventPublisher(
            self.redis, prefix=settings.channel_prefix, stream_maxlen=settings.events_stream_maxlen
        )
        runtime = Runtime(
            settings=settings, store=self.store, redis=self.redis, publisher=publisher
        )
        self.runtimes.append(runtime)
        return runtime

    def script(self, *replies: Reply) -> None:
        self.fake.script(*(replies or (Reply(),)))

    def channel(
        self,
        provider: str = "openai",
        model: str | None = None,
        *,
        api_key: str = "sk-test-0123456789abcdef0123456789abcdef",
        name: str | None = None,
    ) -> ChannelConfig:
        return self.fake.add_channel(
            self.store,
            name or f"aux-{provider}-{model or 'default'}",
            provider=provider,
            model=model or PROVIDER_MODELS[provider][0],
            api_key=api_key,
        )

    def session(self, messages: list[Message]) -> str:
        session_id = self.store.create_session()
        self.store.append_messages(session_id, messages)
        return session_id

    # --- what a job leaves behind ---------------------------------------------------------

    def raw_events(self) -> list[bytes]:
        entries = stream_entries(self.redis, events_stream(self.namespace.prefix))
        return [fields[b"event"] for _id, fields in entries]

    def wire_events(self) -> list[dict[str, Any]]:
        return [json.loads(raw) for raw in self.raw_events()]

    def events(self, session_id: str | None = None) -> list[AnyEvent]:
        parsed = [parse_event(raw) for raw in self.raw_events()]
        return [e for e in parsed if session_id is None or e.session_id == session_id]

    def lock_value(self, session_id: str) -> bytes | None:
        return self.redis.get(lock_key(self.namespace.prefix, session_id))  # type: ignore[return-value]

    def state(self, session_id: str) -> History:
        return History.of(self.store, session_id)


@dataclass(frozen=True)
class History:
    """A session's compacted view and the conversation rows of its full view (compaction-event
    rows are left out: a failed run adds its start and failed rows, by design)."""

    compacted: list[StoredMessage]
    conversation: list[StoredMessage]
    events: list[StoredMessage]

    @classmethod
    def of(cls, store: Store, session_id: str) -> History:
        full = store.load_history(session_id, "full")
        return cls(
            compacted=store.load_history(session_id),
            conversation=[m for m in full if not m.is_event],
            events=[m for m in full if m.is_event],
        )

    def unchanged_since(self, before: History) -> bool:
        return self.compacted == before.compacted and self.conversation == before.conversation

    @property
    def event_kinds(self) -> list[str]:
        return [str((m.metadata or {}).get("event")) for m in self.events]


# --- a JSON Schema checker for the subset pydantic emits ------------------------------------
# jsonschema is not a dependency of the project; this covers every keyword the exported files
# use and refuses any other, so a schema change cannot make it pass silently.


def load_schema(name: str) -> dict[str, Any]:
    return json.loads((SCHEMAS / name).read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def assert_valid(instance: Any, name: str) -> None:
    schema = load_schema(name)
    validator = jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    errors = [e.message for e in validator.iter_errors(instance)]
    assert not errors, f"{name}: {errors} in {instance}"


#: Where the database plays no part (the LLM side of a job), SQLite alone keeps the file fast.
SQLITE_ONLY = pytest.mark.parametrize("engine", ["sqlite"], indirect=True)


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


def assert_fallback_summary(h: Harness, session_id: str, final: object) -> None:
    """A run the opt-in extractive fallback carried: done, its summary the extractive one, the
    run's model saying so."""
    assert isinstance(final, CompactionDone), final
    summary = h.store.latest_summary(session_id)
    assert summary is not None and summary.id == final.summary_message_id
    assert "Extractive" in summary.message.content
    [record] = h.store.runs(session_id)
    assert (record.status, record.model) == ("succeeded", "extractive-fallback")


# --- ordering instead of timing ---------------------------------------------------------------
# A test that needs something to happen while a job waits on the model does it while the fake
# holds its reply, never by racing a sleep against a delay: it holds on any machine, however
# loaded.


def on_llm_request(
    monkeypatch: pytest.MonkeyPatch, fake: FakeLLM, action: Callable[[], object]
) -> None:
    """Run ``action`` in the fake server's thread when the next request arrives, before it is
    answered (the caller waits on the model meanwhile). Later requests are answered as usual."""
    original = fake.next_reply
    pending = [action]

    def next_reply(recorded: Recorded) -> Reply:
        reply = original(recorded)
        try:
            first = pending.pop()
        except IndexError:
            return reply
        first()
        return reply

    monkeypatch.setattr(fake, "next_reply", next_reply)


def wait_until(
    check: Callable[[], T | None],
    what: str,
    timeout: float = 30.0,
    detail: Callable[[], str] = str,
) -> T:
    """Poll ``check`` until it returns something truthy; fail, with ``detail()``, when
    ``timeout`` passes first. The timeout is generous: it bounds a hang, it is not the claim
    being tested."""
    deadline = time.monotonic() + timeout
    while not (value := check()):
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {timeout:g} s\n{detail()}".rstrip())
        time.sleep(0.02)
    return value
