"""Review before apply, the rules without services (docs/architecture.md, "Review"): only a
manual request asks for a review; ``/compact --review``; the draft expiry rule; the apply's
re-check after the session's version moved (the draft's messages still there, uncompacted,
unpruned, nothing restored inside its span) and whether it still fits."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import ValidationError

from compaction.core.contract import CompactionRequested
from compaction.core.errors import DraftStale
from compaction.core.messages import Message
from compaction.producers.commands import SlashCommand, parse_slash_command
from compaction.producers.drafts import fits, recheck
from compaction.store.drafts import DraftRecord, draft_status
from compaction.store.records import StoredMessage

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)


def test_only_a_manual_request_asks_for_a_review() -> None:
    assert CompactionRequested(session_id="s", reason="manual", review=True).review
    with pytest.raises(ValidationError, match="only a manual request may ask for a review"):
        CompactionRequested(session_id="s", reason="auto", review=True)
    wire = CompactionRequested(session_id="s", reason="manual", review=True).to_wire()
    with pytest.raises(ValidationError):
        CompactionRequested.model_validate({**wire, "reason": "auto"})


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("/compact --review", SlashCommand("compact", None, review=True)),
        ("/compact --review keep the schema", SlashCommand("compact", "keep the schema", True)),
        ("/compact --reviewer", SlashCommand("compact", "--reviewer")),
        ("/compact keep --review", SlashCommand("compact", "keep --review")),
    ],
)
def test_compact_review_command(raw: str, expected: SlashCommand) -> None:
    assert parse_slash_command(raw) == expected


@pytest.mark.parametrize(
    ("status", "expires", "expected"),
    [
        ("ready", NOW + timedelta(seconds=1), "ready"),
        ("ready", NOW, "expired"),  # at its time: gone
        ("ready", NOW - timedelta(hours=1), "expired"),
        ("ready", (NOW - timedelta(seconds=1)).replace(tzinfo=None), "expired"),  # SQLite's
        ("applied", NOW - timedelta(hours=1), "applied"),
        ("discarded", NOW + timedelta(hours=1), "discarded"),
    ],
)
def test_the_expiry_rule(status: str, expires: datetime, expected: str) -> None:
    assert draft_status(status, expires, NOW) == expected


def row(i: int, seq: int, *, pruned: bool = False) -> StoredMessage:
    if pruned:
        message = Message(role="tool", content=f"message {i}", id=i, tool_call_id=f"c{i}")
    else:
        message = Message(role="user", content=f"message {i}", id=i)
    return StoredMessage(message, seq, 0, NOW, pruned_at=NOW if pruned else None)


def draft(**plan: Any) -> DraftRecord:
    return DraftRecord(
        id=7,
        session_id="s",
        request_id="r",
        status="ready",
        focus=None,
        summary="the summary",
        edited=False,
        base_version=1,
        plan={
            "stage": "history",
            "summary": {"firstSeq": 2, "lastSeq": 4, "expectedRemoved": 3, "ids": [2, 3, 4]},
            "summaryTokens": 100,
            "prunedIds": [6],
            **plan,
        },
        receipt=None,
        tokens_before=5_000,
        tokens_after=2_000,
        model=None,
        input_tokens=None,
        output_tokens=None,
        cost=None,
        run_id=None,
        created_at=NOW,
        expires_at=NOW + timedelta(hours=1),
    )


VIEW = [row(1, 1), row(2, 2), row(3, 3), row(4, 4), row(5, 5), row(6, 6), row(8, 8)]


def test_the_recheck_passes_when_the_draft_s_messages_are_all_there() -> None:
    recheck(draft(), VIEW)  # a turn appended (8) changes nothing


@pytest.mark.parametrize(
    ("view", "why"),
    [
        ([r for r in VIEW if r.id != 3], "1 of its messages were compacted or pruned since"),
        ([*VIEW[:5], row(6, 6, pruned=True), VIEW[6]], "1 of its messages were compacted or"),
        ([*VIEW[:2], row(9, 2), *VIEW[2:]], "messages were restored inside the span"),
    ],
)
def test_the_recheck_refuses_a_changed_span(view: list[StoredMessage], why: str) -> None:
    with pytest.raises(DraftStale, match=why):
        recheck(draft(), view)


def test_the_pinned_messages_of_the_span() -> None:
    # one pinned when the draft was written: kept in place, counted apart
    kept = {"firstSeq": 2, "lastSeq": 4, "expectedRemoved": 2, "ids": [2, 4], "keptIds": [3]}
    recheck(draft(summary=kept), VIEW)
    # pinned since: not replaced
    pinned = StoredMessage(Message(role="user", content="message 3", id=3, pinned=True), 3, 0, NOW)
    with pytest.raises(DraftStale, match="a message it replaces was pinned since"):
        recheck(draft(), [*VIEW[:2], pinned, *VIEW[3:]])


def test_still_fits_under_the_threshold_or_smaller() -> None:
    # the draft saves 3,000 tokens; an edited summary 50 tokens longer saves 2,950
    assert fits(draft(), 6_000, 4_000, 100) == 3_000
    assert fits(draft(), 6_000, 4_000, 150) == 3_050
    assert fits(draft(), 9_000, 4_000, 100) == 6_000  # over the threshold, but smaller
    with pytest.raises(DraftStale, match="not under 4000 nor 6000"):
        fits(draft(), 6_000, 4_000, 3_200)  # an edit that makes it larger
