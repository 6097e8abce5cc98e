"""The rows a turn shows (gateway/chat.py, ``Turns._store``): built from what the turn wrote
(the INSERT's ids and seqs) instead of read back (docs/benchmarks.md, "Overheads"). Each row a
socket receives, and the reply the POST answers with, equal the session's stored history row:
the user's message, the model's recall call, the tool's answer and the final reply."""

from __future__ import annotations

from typing import Any

import pytest

from compaction.tools import RECALL
from tests.gateway.conftest import Gateway
from tests.gateway.realtime_helpers import of_type, socket
from tests.integration.helpers import compact_session, new_session
from tests.integration.test_store_recall import planted
from tests.llm_server import FakeLLM, Reply

KEY = "sk-test-chat-0123456789abcdef"


@pytest.fixture
def gateway_settings() -> dict[str, Any]:
    return {"chat_channel": "house"}


def test_every_shown_row_is_the_stored_row(gateway: Gateway, fake_llm: FakeLLM) -> None:
    gateway.store.add_channel(
        "house",
        provider="openai-compatible",
        model="chat-model",
        base_url=fake_llm.url_for("openai-compatible"),
        api_key=KEY,
    )
    session_id, _ids = new_session(gateway.store, planted())
    compact_session(gateway.store, session_id)
    fake_llm.script(
        Reply(text="Let me look.", tool_call=(RECALL, {"query": "deploy_key_alpha"})),
        Reply(text="Found it."),
    )
    with socket(gateway, session_id) as ws:
        answer = gateway.client.post(
            f"/api/sessions/{session_id}/messages", json={"content": "Which key line?"}
        )
        seen = ws.until(of_type("token_update"))
    assert answer.status_code == 200, answer.text
    shown = [event["message"] for event in seen if event["type"] == "message"]
    assert [row["role"] for row in shown] == ["user", "assistant", "tool", "assistant"]
    history = gateway.client.get(f"/api/sessions/{session_id}/history", params={"view": "full"})
    stored = {row["id"]: row for row in history.json()["messages"]}
    assert shown == [stored[row["id"]] for row in shown]
    assert answer.json()["reply"] == shown[-1]
    assert [row["seq"] for row in shown] == sorted(row["seq"] for row in shown)
