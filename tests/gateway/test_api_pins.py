"""Pins through HTTP (docs/architecture.md, "Pins"): ``POST`` and ``DELETE
/api/sessions/{id}/messages/{messageId}/pin``; a pinned message survives ``/compact`` in the
compacted view, in place before the summary; its tokens show in the context stats; what cannot
be pinned is refused with its code and nothing changes."""

from __future__ import annotations

from typing import Any

import pytest

from tests.gateway.api_helpers import imported, view
from tests.gateway.conftest import Gateway
from tests.llm_server import FakeLLM

PIN_KEYS = {"sessionId", "messageId", "pinned", "changed", "pinnedTokens"}


@pytest.fixture
def gateway_settings() -> dict[str, Any]:
    """A 20,000-token window: a 14,000-token threshold, which five ~3,000-token pins reach."""
    return {"context_window": 20_000}


def pin_path(message_id: int, session: str = "airline") -> str:
    return f"/api/sessions/{session}/messages/{message_id}/pin"


def error(answer: Any) -> tuple[int, str, str]:
    body = answer.json()["error"]
    return answer.status_code, body["code"], body["message"]


def test_a_pinned_message_survives_compact_in_place(gateway: Gateway, fake_llm: FakeLLM) -> None:
    gateway.auxiliary(fake_llm)
    imported(gateway)
    original = view(gateway, "compacted")
    assert not any(r["pinned"] for r in original)
    target = original[5]  # a tool result in the middle (past the head, before the request)
    call = original[4]
    assert target["role"] == "tool" and call["toolCalls"]
    answer = gateway.client.post(pin_path(target["id"]))
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert set(body) == PIN_KEYS
    assert body["pinned"] and body["changed"] and body["messageId"] == target["id"]
    assert body["pinnedTokens"] > 0
    stats = gateway.client.get("/api/sessions/airline/context-stats").json()
    assert stats["pinnedTokens"] == body["pinnedTokens"]
    again = gateway.client.post(pin_path(target["id"])).json()
    assert again["pinned"] and not again["changed"]

    assert gateway.client.post("/api/sessions/airline/compact").status_code == 202
    gateway.drain()
    compacted = view(gateway, "compacted")
    ids = [r["id"] for r in compacted]
    summary = next(i for i, r in enumerate(compacted) if r["isCompactionSummary"])
    assert ids.index(call["id"]) + 1 == ids.index(target["id"]) < summary  # the step, in place
    kept = compacted[ids.index(target["id"])]
    assert kept["pinned"] and kept["content"] == target["content"]
    full = {r["id"]: r for r in view(gateway, "full")}
    assert full[target["id"]]["compactedAt"] is None
    assert full[original[3]["id"]]["compactedAt"] is not None  # the request before was folded

    unpinned = gateway.client.delete(pin_path(target["id"]))
    assert unpinned.status_code == 200 and not unpinned.json()["pinned"]
    assert unpinned.json()["pinnedTokens"] == 0
    assert not {r["id"]: r for r in view(gateway, "compacted")}[target["id"]]["pinned"]


def test_what_cannot_be_pinned_is_refused(gateway: Gateway, fake_llm: FakeLLM) -> None:
    gateway.auxiliary(fake_llm)
    imported(gateway)
    assert gateway.client.post("/api/sessions/airline/compact").status_code == 202
    gateway.drain()
    full = view(gateway, "full")
    summary = next(r for r in full if r["isCompactionSummary"])
    folded = next(r for r in full if r["compactedAt"])
    before = view(gateway, "full")

    status, code, message = error(gateway.client.post(pin_path(summary["id"])))
    assert (status, code) == (400, "invalid_request") and "compaction summary" in message
    status, code, message = error(gateway.client.post(pin_path(folded["id"])))
    assert (status, code) == (400, "invalid_request") and "folded into summary" in message
    status, code, _ = error(gateway.client.post(pin_path(10**9)))
    assert (status, code) == (404, "not_found")
    status, code, _ = error(gateway.client.post(pin_path(folded["id"], "nobody")))
    assert (status, code) == (404, "session_not_found")
    status, code, _ = error(gateway.client.post("/api/sessions/airline/messages/x/pin"))
    assert (status, code) == (400, "invalid_request")
    assert view(gateway, "full") == before


def test_pins_over_the_threshold_are_refused(gateway: Gateway) -> None:
    long = "word " * 2_400  # ~3,000 tokens
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"{i} {long}"} for i in range(8)
    ]
    created = gateway.client.post("/api/sessions", json={"id": "big", "messages": messages})
    assert created.status_code == 201, created.text
    ids = [r["id"] for r in view(gateway, "compacted", "big")]
    for message_id in ids[:4]:
        assert gateway.client.post(pin_path(message_id, "big")).status_code == 200
    version_before = view(gateway, "full", "big")
    status, code, message = error(gateway.client.post(pin_path(ids[4], "big")))
    assert (status, code) == (409, "pins_over_threshold")
    assert "threshold of 14,000" in message and "unpin" in message
    assert view(gateway, "full", "big") == version_before
    # unpinning one makes room again
    assert gateway.client.delete(pin_path(ids[0], "big")).status_code == 200
    assert gateway.client.post(pin_path(ids[4], "big")).json()["pinned"]
