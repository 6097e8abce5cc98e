"""Invalid payloads through the job's RQ entry point (docs/architecture.md, "The job", "Error
codes"): never raised, logged when no session can be read, published when one can; an unknown
session. Same harness as ``test_worker_jobs.py``."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from compaction.core.contract import CompactionFailed
from compaction.worker.jobs import compaction_requested
from compaction.worker.runtime import install
from tests.fakes import conversation
from tests.integration.worker_helpers import SQLITE_ONLY, Harness, assert_valid, manual


@SQLITE_ONLY
def test_invalid_payload_without_a_session_is_logged_not_published(
    h: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    install(h.runtime())

    with caplog.at_level(logging.INFO):
        result = compaction_requested({"reason": "manual", "requestId": "r-1"})

    assert result["type"] == "compaction_failed"
    assert result["code"] == "invalid_request"
    assert "sessionId" in result["error"]
    assert h.raw_events() == []
    [record] = [r for r in caplog.records if r.getMessage() == "invalid job"]
    assert (record.name, record.levelname) == ("compaction.job", "ERROR")
    assert record.code == "invalid_request"  # type: ignore[attr-defined]
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
