"""Review before apply over HTTP and the socket (docs/architecture.md, "Review"):
``/compact`` with ``review`` writes a draft (the history unchanged), ``PUT /api/drafts/{id}``
edits it, ``apply`` writes the run (undone through ``/api/runs/{id}/restore``), a compaction in
between answers 409 ``draft_stale``, an applied or discarded one 409 ``draft_closed``;
regenerate, discard and the session's list; the socket's ``compact`` with ``review``."""

from __future__ import annotations

import time
from typing import Any

import pytest

from compaction.service.queue import compaction_queue
from tests.fakes import conversation
from tests.gateway.api_helpers import bubbles, imported, view
from tests.gateway.conftest import Gateway
from tests.gateway.realtime_helpers import WAIT_S, of_type, socket, types
from tests.llm_server import FakeLLM

EDITED = "The customer asked about a refund; the agent looked up reservation ZFA04Y."
DRAFT_KEYS = {
    "id",
    "sessionId",
    "requestId",
    "status",
    "focus",
    "summary",
    "edited",
    "stage",
    "removedCount",
    "prunedCount",
    "tokensBefore",
    "tokensAfter",
    "receipt",
    "model",
    "inputTokens",
    "outputTokens",
    "cost",
    "runId",
    "createdAt",
    "expiresAt",
}


def reviewed(
    gateway: Gateway, fake_llm: FakeLLM | None, focus: str = "the refund"
) -> dict[str, Any]:
    """A review of the imported session (imported first unless ``fake_llm`` is ``None``)."""
    if fake_llm is not None:
        gateway.auxiliary(fake_llm)
        imported(gateway)
    queued = gateway.client.post(
        "/api/sessions/airline/compact", json={"focus": focus, "review": True}
    )
    assert queued.status_code == 202, queued.text
    gateway.drain()
    drafts = gateway.client.get("/api/sessions/airline/drafts").json()["drafts"]
    assert [d["status"] for d in drafts] == ["ready"]
    assert drafts[0]["requestId"] == queued.json()["requestId"]
    draft: dict[str, Any] = drafts[0]
    return draft


def refused(answer: Any, status: int, code: str) -> str:
    assert answer.status_code == status, answer.text
    error = answer.json()["error"]
    assert error["code"] == code, error
    message: str = error["message"]
    return message


def test_review_edit_apply_then_undo(gateway: Gateway, fake_llm: FakeLLM) -> None:
    gateway.auxiliary(fake_llm)
    imported(gateway)
    original = view(gateway, "compacted")
    display = view(gateway, "display")
    draft = reviewed(gateway, None)
    assert view(gateway, "display") == display  # the history and its bubbles as they were
    assert set(draft) == DRAFT_KEYS
    assert draft["focus"] == "the refund" and "the refund" in fake_llm.bodies_text()
    assert draft["removedCount"] > 0 and draft["tokensAfter"] < draft["tokensBefore"]
    url = f"/api/drafts/{draft['id']}"
    assert gateway.client.get(url).json() == draft

    edited = gateway.client.put(url, json={"summary": EDITED})
    assert edited.status_code == 200, edited.text
    assert edited.json()["edited"] and edited.json()["summary"] == EDITED
    applied = gateway.client.post(f"{url}/apply")
    assert applied.status_code == 200, applied.text
    body = applied.json()
    assert body["draft"]["status"] == "applied" and body["draft"]["runId"] == body["runId"]
    assert body["removedCount"] == draft["removedCount"]
    compacted = view(gateway, "compacted")
    assert [r["content"] for r in compacted if r["isCompactionSummary"]] == [EDITED]
    assert bubbles(view(gateway, "display")) == ["done"]
    run = gateway.client.get(f"/api/runs/{body['runId']}").json()
    assert run["status"] == "succeeded" and run["reason"] == "manual"

    refused(gateway.client.post(f"{url}/apply"), 409, "draft_closed")
    refused(gateway.client.put(url, json={"summary": "again"}), 409, "draft_closed")
    restored = gateway.client.post(f"/api/runs/{body['runId']}/restore")
    assert restored.status_code == 200, restored.text
    assert view(gateway, "compacted") == original


def test_a_compaction_in_between_makes_the_draft_stale(gateway: Gateway, fake_llm: FakeLLM) -> None:
    draft = reviewed(gateway, fake_llm)
    assert gateway.client.post("/api/sessions/airline/compact").status_code == 202
    gateway.drain()
    before = view(gateway, "full")

    message = refused(gateway.client.post(f"/api/drafts/{draft['id']}/apply"), 409, "draft_stale")

    assert "no longer fits" in message and "nothing applied" in message
    assert view(gateway, "full") == before
    assert gateway.client.get(f"/api/drafts/{draft['id']}").json()["status"] == "ready"


def test_regenerate_discard_and_bad_requests(gateway: Gateway, fake_llm: FakeLLM) -> None:
    first = reviewed(gateway, fake_llm)
    url = f"/api/drafts/{first['id']}"
    again = gateway.client.post(f"{url}/regenerate", json={"focus": "the baggage"})
    assert again.status_code == 202 and again.json()["status"] == "enqueued"
    gateway.drain()
    drafts = gateway.client.get("/api/sessions/airline/drafts").json()["drafts"]
    assert [(d["status"], d["focus"]) for d in drafts] == [
        ("ready", "the baggage"),
        ("discarded", "the refund"),
    ]
    refused(gateway.client.post(f"{url}/apply"), 409, "draft_closed")
    newer = f"/api/drafts/{drafts[0]['id']}"
    for body in ({"summary": ""}, {"summary": "  "}, {"summary": "x" * 100_001}, {"text": "x"}):
        refused(gateway.client.put(newer, json=body), 400, "invalid_request")
    refused(gateway.client.get("/api/drafts/999999"), 404, "not_found")
    refused(gateway.client.get("/api/sessions/nobody/drafts"), 404, "session_not_found")

    discarded = gateway.client.post(f"{newer}/discard")
    assert discarded.status_code == 200 and discarded.json()["status"] == "discarded"
    refused(gateway.client.post(f"{newer}/discard"), 409, "draft_closed")
    assert bubbles(view(gateway, "display")) == []


def test_review_from_the_socket(gateway: Gateway, fake_llm: FakeLLM) -> None:
    gateway.auxiliary(fake_llm)
    session_id = gateway.store.create_session("long", messages=conversation(20))
    before = gateway.store.load_history(session_id, "full")
    with socket(gateway, session_id) as ws:
        ws.send({"type": "compact", "review": True, "focus": "the directories"})
        _wait_for_queued(gateway)
        gateway.drain()
        seen = ws.until(of_type("compaction_draft"))
    assert types(seen) == ["compaction_start", "compaction_draft"]
    event = seen[-1]
    [draft] = gateway.store.session_drafts(session_id)
    assert event["draftId"] == draft.id and event["tokensAfter"] == draft.tokens_after
    assert gateway.store.load_history(session_id, "full") == before


@pytest.mark.parametrize("body", [{"review": "yes"}, {"review": True, "extra": 1}])
def test_a_compact_request_s_review_is_typed(gateway: Gateway, body: dict[str, Any]) -> None:
    imported(gateway)
    refused(gateway.client.post("/api/sessions/airline/compact", json=body), 400, "invalid_request")


def _wait_for_queued(gateway: Gateway) -> None:
    producers = gateway.resources.producers
    queue = compaction_queue(producers.redis, producers.settings.queue_name)
    deadline = time.monotonic() + WAIT_S
    while not queue.count:
        assert time.monotonic() < deadline, "no compaction job was queued"
        time.sleep(0.05)
