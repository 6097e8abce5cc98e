"""What the gateway's API tests share: the real transcript they import over HTTP, and the
history rows of a view (camelCase: gateway/responses.py)."""

from __future__ import annotations

import json
from typing import Any

from tests.fakes import TRANSCRIPTS
from tests.gateway.conftest import Gateway

#: a customer-service conversation whose first 40 messages end on a tool result
TRANSCRIPT = TRANSCRIPTS / "taubench_airline_idx52.json"
HISTORY_KEYS = {
    "id",
    "seq",
    "role",
    "content",
    "toolCalls",
    "toolCallId",
    "compactedAt",
    "compactedIntoId",
    "isCompactionSummary",
    "prunedAt",
    "metadata",
    "pinned",
}


def forty() -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = json.loads(TRANSCRIPT.read_text(encoding="utf-8"))[:40]
    return messages


def imported(gateway: Gateway, session: str = "airline", **params: str) -> dict[str, Any]:
    answer = gateway.client.post(f"/api/sessions/{session}/import", json=forty(), params=params)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def view(gateway: Gateway, name: str, session: str = "airline") -> list[dict[str, Any]]:
    answer = gateway.client.get(f"/api/sessions/{session}/history", params={"view": name})
    assert answer.status_code == 200, answer.text
    rows: list[dict[str, Any]] = answer.json()["messages"]
    return rows


def bubbles(rows: list[dict[str, Any]]) -> list[str]:
    """The compaction-event rows' kinds, in order (start, done, failed, restored)."""
    return [
        r["metadata"]["event"]
        for r in rows
        if r["metadata"] and r["metadata"].get("systemType") == "compaction_event"
    ]
