"""Per-turn token statistics (producers/stats.py ``record_turn``, gateway/chat.py): each model
call through the gateway records its tokens per segment and the pre-call decision, logs
``compact decision``, and context stats serve the latest turn and the last ten, at both paths
and through ``compaction stats``; a stored row's segment tag wins."""

from __future__ import annotations

import logging

import pytest

from compaction.core.messages import Message
from tests.gateway.conftest import Gateway
from tests.gateway.realtime_helpers import chat_channel
from tests.llm_server import FakeLLM, Reply

ASK = "Now run the tests and tell me what failed."


def loop_session(gateway: Gateway) -> str:
    """A system prompt, an earlier exchange, and nothing else yet."""
    return gateway.store.create_session(
        "s1",
        model="chat-1",
        messages=[
            Message(role="system", content="You are a coding agent."),
            Message(role="user", content="Read the README, please."),
            Message(role="assistant", content="It describes a compaction service."),
        ],
    )


def test_a_turn_records_one_row_with_its_decision(
    gateway: Gateway, fake_llm: FakeLLM, caplog: pytest.LogCaptureFixture
) -> None:
    chat_channel(gateway, fake_llm)
    session_id = loop_session(gateway)
    fake_llm.script(Reply(text="Two tests failed."))
    with caplog.at_level(logging.INFO):
        answer = gateway.client.post(f"/api/sessions/{session_id}/messages", json={"content": ASK})
    assert answer.status_code == 200, answer.text
    (row,) = gateway.store.token_stats(session_id)
    assert row.decision == answer.json()["ensured"]["status"] == "below_threshold"
    assert row.model == "chat-1"
    assert row.usage == {
        "inputTokens": answer.json()["usage"]["inputTokens"],
        "outputTokens": answer.json()["usage"]["outputTokens"],
    }
    # What was sent: the prompt, the earlier exchange (history) and the new request (state).
    assert row.tokens["system"] > 0 and row.tokens["history"] > 0 and row.tokens["state"] > 0
    assert row.tokens["loop"] == 0 and sum(row.tokens.values()) == row.total_tokens
    [logged] = [r for r in caplog.records if r.getMessage() == "compact decision"]
    assert logged.decision == "below_threshold"  # type: ignore[attr-defined]
    assert logged.state == row.tokens["state"]  # type: ignore[attr-defined]

    stats = gateway.client.get(f"/api/sessions/{session_id}/context-stats").json()
    assert stats["latestTurn"] == stats["turns"][0]
    latest = stats["latestTurn"]
    assert latest["decision"] == "below_threshold" and latest["totalTokens"] == row.total_tokens
    assert latest["thresholdTokens"] == stats["thresholdTokens"] == stats["budgetTokens"]
    # The stored view now ends with the reply: part of the loop after the latest request.
    assert stats["tokensBySegment"]["loop"] > 0
    v1 = gateway.client.get("/api/v1/agent/context-stats", params={"conversation_id": session_id})
    assert v1.json()["turns"] == stats["turns"]


def test_context_stats_serve_the_last_ten_turns_newest_first(
    gateway: Gateway, fake_llm: FakeLLM
) -> None:
    chat_channel(gateway, fake_llm)
    session_id = loop_session(gateway)
    for index in range(11):
        fake_llm.script(Reply(text=f"reply {index}"))
        answer = gateway.client.post(
            f"/api/sessions/{session_id}/messages", json={"content": f"{ASK} #{index}"}
        )
        assert answer.status_code == 200, answer.text
    turns = gateway.client.get(f"/api/sessions/{session_id}/context-stats").json()["turns"]
    assert len(turns) == 10
    ids = [t["id"] for t in turns]
    assert ids == sorted(ids, reverse=True)
    totals = [t["totalTokens"] for t in turns]
    assert totals == sorted(totals, reverse=True)  # each turn sends more than the one before
    assert len(gateway.store.token_stats(session_id, limit=100)) == 11


def test_a_stored_tag_wins_in_the_context_stats(gateway: Gateway) -> None:
    session_id = loop_session(gateway)
    gateway.store.append_messages(
        session_id,
        [Message(role="user", content="Current state: 3 files changed, tests red.")],
        metadata={"segment": "loop"},
    )
    stats = gateway.client.get(f"/api/sessions/{session_id}/context-stats").json()
    segments = stats["tokensBySegment"]
    # Untagged, the note would be the latest request (state) and the loop empty; tagged,
    # the note is loop and the exchange before it stays history.
    assert segments["loop"] > 0 and segments["state"] == 0 and segments["history"] > 0
    assert sum(segments.values()) == stats["usedTokens"]
