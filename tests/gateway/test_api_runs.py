"""``/compact``, the runs and restore through HTTP (docs/architecture.md, "The gateway"): 202
with the request's id, a worker (RQ's SimpleWorker on the test's queue) runs it, the history
shows the summary and the display view its bubbles, the run is listed, ``restore`` through
``/api/runs/{id}/restore`` gives back the original compacted view."""

from __future__ import annotations

from tests.gateway.api_helpers import bubbles, imported, view
from tests.gateway.conftest import Gateway
from tests.llm_server import FakeLLM

RUN_KEYS = {
    "id",
    "sessionId",
    "requestId",
    "reason",
    "status",
    "code",
    "error",
    "tokensBefore",
    "tokensAfter",
    "removedCount",
    "prunedCount",
    "summaryMessageId",
    "model",
    "finishedAt",
    "restoredAt",
    # the receipt (docs/architecture.md, "Receipt")
    "inputTokens",
    "outputTokens",
    "cost",
    "receipt",
}


def test_compact_then_history_runs_and_restore(gateway: Gateway, fake_llm: FakeLLM) -> None:
    gateway.auxiliary(fake_llm)
    imported(gateway)
    original = view(gateway, "compacted")

    queued = gateway.client.post("/api/sessions/airline/compact", json={"focus": "the refund"})
    assert queued.status_code == 202
    assert queued.json()["status"] == "enqueued"
    request_id = queued.json()["requestId"]
    again = gateway.client.post("/api/sessions/airline/compact")  # no body: no focus
    assert again.status_code == 202
    assert again.json() == {"status": "already_pending", "requestId": request_id}
    gateway.drain()
    assert "the refund" in fake_llm.bodies_text()

    compacted = view(gateway, "compacted")
    [summary] = [r for r in compacted if r["isCompactionSummary"]]
    assert len(compacted) < len(original)
    assert compacted[0] == original[0]  # the protected head
    full = view(gateway, "full")
    folded = [r for r in full if r["compactedIntoId"] == summary["id"]]
    assert len(folded) == len(original) - len(compacted) + 1
    assert all(r["compactedAt"] for r in folded)
    assert {r["id"] for r in original} <= {r["id"] for r in full}
    display = view(gateway, "display")
    assert bubbles(display) == ["start", "done"]
    assert [r for r in display if not bubbles([r])] == compacted

    [run] = gateway.client.get("/api/sessions/airline/runs").json()["runs"]
    assert set(run) == RUN_KEYS
    assert (run["status"], run["reason"], run["requestId"]) == ("succeeded", "manual", request_id)
    assert run["summaryMessageId"] == summary["id"]
    assert run["removedCount"] == len(folded)
    assert run["tokensAfter"] < run["tokensBefore"] and run["restoredAt"] is None
    assert gateway.client.get(f"/api/runs/{run['id']}").json() == run
    stats = gateway.client.get("/api/sessions/airline/context-stats").json()
    assert stats["compactions"] == 1 and stats["lastRun"]["id"] == run["id"]
    assert stats["messages"] == len(compacted)

    restored = gateway.client.post(f"/api/runs/{run['id']}/restore")
    assert restored.status_code == 200, restored.text
    assert restored.json()["status"] == "restored" and restored.json()["restoredAt"]
    assert view(gateway, "compacted") == original
    assert bubbles(view(gateway, "display")) == ["start", "done", "restored"]
    assert gateway.client.get("/api/sessions/airline").json()["compactions"] == 0

    twice = gateway.client.post(f"/api/runs/{run['id']}/restore")
    assert twice.status_code == 400
    assert twice.json()["error"]["code"] == "invalid_request"
    assert "nothing to restore" in twice.json()["error"]["message"]


def test_an_unknown_run_is_404(gateway: Gateway) -> None:
    for answer in (
        gateway.client.get("/api/runs/999999"),
        gateway.client.post("/api/runs/999999/restore"),
    ):
        assert answer.status_code == 404
        assert answer.json()["error"] == {
            "code": "not_found",
            "message": "compaction run 999999 not found",
        }
    assert gateway.client.get("/api/runs/abc").status_code == 400


def test_a_compact_without_an_auxiliary_channel_fails_as_a_run(gateway: Gateway) -> None:
    imported(gateway)
    queued = gateway.client.post("/api/sessions/airline/compact", json={})
    assert queued.status_code == 202
    gateway.drain()
    [run] = gateway.client.get("/api/sessions/airline/runs").json()["runs"]
    assert (run["status"], run["code"]) == ("failed", "no_auxiliary_model")
    assert bubbles(view(gateway, "display")) == ["start", "failed"]
    too_long = gateway.client.post("/api/sessions/airline/compact", json={"focus": "x" * 2_001})
    assert too_long.status_code == 400
    assert "focus" in too_long.json()["error"]["message"]
