"""Recall through HTTP (docs/architecture.md, "Recall"): ``GET /api/sessions/{id}/recall``
finds a compacted original (never a live message), redacted, within ``maxTokens``; bad bounds
are 400, an unknown session 404."""

from __future__ import annotations

from compaction.core.redact import REDACTED
from tests.gateway.conftest import Gateway
from tests.integration.helpers import compact_session, new_session
from tests.integration.test_store_recall import SECRET, planted

KEYS = {"sessionId", "query", "maxTokens", "matched", "tokens", "results"}
HIT_KEYS = {"messageId", "seq", "role", "toolName", "content", "truncated"}


def compacted(gateway: Gateway) -> str:
    session_id, _ids = new_session(gateway.store, planted())
    compact_session(gateway.store, session_id)
    return session_id


def test_recall_finds_the_compacted_original(gateway: Gateway) -> None:
    session_id = compacted(gateway)
    answer = gateway.client.get(
        f"/api/sessions/{session_id}/recall", params={"q": "deploy_key_alpha", "maxTokens": 2000}
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert set(body) == KEYS and body["maxTokens"] == 2000
    [hit] = body["results"]
    assert set(hit) == HIT_KEYS
    assert hit["role"] == "tool" and hit["toolName"] == "bash"
    assert SECRET not in hit["content"] and REDACTED in hit["content"]
    assert body["tokens"] <= 2000
    live = gateway.client.get(f"/api/sessions/{session_id}/recall", params={"q": "word0"})
    assert live.status_code == 200 and live.json()["results"] == []


def test_recall_bounds_and_unknown_session(gateway: Gateway) -> None:
    session_id = compacted(gateway)
    path = f"/api/sessions/{session_id}/recall"
    assert gateway.client.get(path).status_code == 400
    assert gateway.client.get(path, params={"q": "x" * 501}).status_code == 400
    assert gateway.client.get(path, params={"q": "x", "maxTokens": 10}).status_code == 400
    blank = gateway.client.get(path, params={"q": "   "})
    assert blank.status_code == 400 and blank.json()["error"]["code"] == "invalid_request"
    missing = gateway.client.get("/api/sessions/nope/recall", params={"q": "x"})
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "session_not_found"


def test_recall_cuts_a_long_original_around_the_match(gateway: Gateway) -> None:
    session_id = compacted(gateway)
    answer = gateway.client.get(
        f"/api/sessions/{session_id}/recall", params={"q": "deploy_key_alpha", "maxTokens": 100}
    )
    assert answer.status_code == 200, answer.text
    [hit] = answer.json()["results"]
    assert hit["truncated"] and hit["content"].startswith("… [")
    assert hit["content"].endswith("deploy_key_alpha") and SECRET not in hit["content"]
    assert answer.json()["tokens"] <= 100
