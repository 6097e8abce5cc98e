"""The must-show of recall (docs/architecture.md, "Recall"): a chat turn through the gateway,
with the real SDK of each provider (OpenAI's and Anthropic's) against the loopback model. The
model is offered the recall tool, calls it; the gateway answers from the database (the
compacted original, redacted), asks the model again and stores the call, the tool's answer and
the final reply in the history like any turn."""

from __future__ import annotations

from typing import Any

import pytest

from compaction.tools import RECALL
from tests.gateway.conftest import Gateway
from tests.integration.helpers import compact_session, new_session
from tests.integration.test_store_recall import SECRET, planted
from tests.llm_server import TOOL_CALL_ID, FakeLLM, Reply

KEY = "sk-test-chat-0123456789abcdef"
FINAL = "The deploy key line was in the third directory's listing."


@pytest.fixture
def gateway_settings() -> dict[str, Any]:
    return {"chat_channel": "house"}


def offered_tools(body: dict[str, Any]) -> list[str]:
    return [t.get("name") or t["function"]["name"] for t in body.get("tools", [])]


@pytest.mark.parametrize("provider", ["openai-compatible", "anthropic"])
def test_the_model_calls_recall_and_the_gateway_answers_from_the_database(
    gateway: Gateway, fake_llm: FakeLLM, provider: str
) -> None:
    gateway.store.add_channel(
        "house",
        provider=provider,
        model="chat-model",
        base_url=fake_llm.url_for(provider),
        api_key=KEY,
    )
    session_id, _ids = new_session(gateway.store, planted())
    compact_session(gateway.store, session_id)
    fake_llm.script(
        Reply(text="Let me look.", tool_call=(RECALL, {"query": "deploy_key_alpha"})),
        Reply(text=FINAL),
    )
    answer = gateway.client.post(
        f"/api/sessions/{session_id}/messages", json={"content": "What was the deploy key line?"}
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["reply"]["content"] == FINAL
    assert answer.json()["usage"]["apiCalls"] == 2
    first, second = fake_llm.requests
    assert offered_tools(first.body) == [RECALL]
    # the second call carries the tool's answer: the compacted original, its secret redacted
    sent = fake_llm.bodies_text()
    assert "deploy_key_alpha" in str(second.body) and TOOL_CALL_ID in str(second.body)
    assert SECRET not in sent
    rows = gateway.client.get(
        f"/api/sessions/{session_id}/history", params={"view": "compacted"}
    ).json()["messages"]
    *_, asked, call, result, final = rows
    assert asked["role"] == "user" and asked["content"] == "What was the deploy key line?"
    assert call["role"] == "assistant" and call["toolCalls"][0]["name"] == RECALL
    assert result["role"] == "tool" and result["toolCallId"] == TOOL_CALL_ID
    assert "deploy_key_alpha" in result["content"] and "tool (bash)" in result["content"]
    assert SECRET not in result["content"]
    assert final["role"] == "assistant" and final["content"] == FINAL


def test_the_model_that_keeps_calling_is_asked_without_the_tool_at_last(
    gateway: Gateway, fake_llm: FakeLLM
) -> None:
    provider = "openai-compatible"
    gateway.store.add_channel(
        "house",
        provider=provider,
        model="chat-model",
        base_url=fake_llm.url_for(provider),
        api_key=KEY,
    )
    session_id = gateway.store.create_session()
    calling = Reply(text="again", tool_call=(RECALL, {"query": "anything"}))
    fake_llm.script(calling, calling, calling, Reply(text=FINAL))
    answer = gateway.client.post(f"/api/sessions/{session_id}/messages", json={"content": "hi"})
    assert answer.status_code == 200, answer.text
    assert answer.json()["reply"]["content"] == FINAL
    assert [offered_tools(r.body) for r in fake_llm.requests] == [[RECALL]] * 3 + [[]]
