"""The ``compaction_requested`` job when something fails (docs/architecture.md, "The job",
"Error codes"): the auxiliary model times out, errs or answers too little, no auxiliary channel,
the database fails during the write; each leaves the compacted and full histories exactly as
they were. And the opt-in extractive fallback. Same harness as ``test_worker_jobs.py``."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import Engine

from compaction.core.contract import CompactionDone
from compaction.worker.jobs import run
from tests.fakes import conversation
from tests.integration.helpers import driver_error, failing
from tests.integration.worker_helpers import (
    SQLITE_ONLY,
    Harness,
    assert_failed,
    assert_fallback_summary,
    manual,
)
from tests.llm_server import Reply

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


# --- the opt-in extractive fallback (docs/architecture.md, "The algorithm") -----------------------


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

    assert_fallback_summary(h, session_id, done)
    assert len(h.fake.requests) == 1


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
