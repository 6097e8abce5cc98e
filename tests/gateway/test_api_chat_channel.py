"""Which channel answers a session's chat turns (gateway/chat_model.py, docs/architecture.md,
"Which channel answers"): the agent's chat channel, else the channel serving the session's
model, else ``COMPACTION_CHAT_CHANNEL``, else the offline model, else ``no_chat_model``;
``GET /api/sessions/{id}/chat-channel`` says which and why; a channel added later never takes
a session over; removing an agent's chat channel clears the agent's choice (the column has no
ON DELETE action)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from compaction.gateway.chat_model import OfflineChatModel
from tests.gateway.conftest import Gateway
from tests.llm_server import FakeLLM, Reply

KEY = "sk-test-chat-0123456789abcdef"


@pytest.fixture
def gateway_settings() -> dict[str, Any]:
    return {"chat_channel": "house"}


def add(gateway: Gateway, fake: FakeLLM, name: str, model: str, **more: Any) -> int:
    channel = gateway.store.add_channel(
        name,
        provider="openai-compatible",
        model=model,
        base_url=fake.url_for("openai-compatible"),
        api_key=KEY,
        **more,
    )
    return channel.id


def choose(gateway: Gateway, agent_id: str, channel: int | str | None) -> None:
    """The agent's chat channel, through ``PUT /api/agents/{id}`` (``chatChannel``)."""
    answer = gateway.client.put(f"/api/agents/{agent_id}", json={"chatChannel": channel})
    assert answer.status_code == 200, answer.text


def chat_channel_of(gateway: Gateway, agent_id: str) -> int | None:
    agent = gateway.store.get_agent(agent_id)
    assert agent is not None
    return agent.chat_channel_id


def say(gateway: Gateway, fake: FakeLLM, session_id: str) -> httpx.Response:
    fake.script(Reply(text="ok"))
    return gateway.client.post(f"/api/sessions/{session_id}/messages", json={"content": "hi"})


def answered_by(gateway: Gateway, fake: FakeLLM, session_id: str) -> str:
    """The model the fake LLM was asked for by one turn of the session."""
    answer = say(gateway, fake, session_id)
    assert answer.status_code == 200, answer.text
    return str(fake.requests[-1].body["model"])


def shown(gateway: Gateway, session_id: str) -> dict[str, Any]:
    answer = gateway.client.get(f"/api/sessions/{session_id}/chat-channel")
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def test_the_agents_chat_channel_answers_whatever_the_sessions_model(
    gateway: Gateway, fake_llm: FakeLLM
) -> None:
    add(gateway, fake_llm, "house", "house-model")
    add(gateway, fake_llm, "serves-a", "model-a")
    chosen = add(gateway, fake_llm, "writer-chat", "model-b")
    choose(gateway, "writer", chosen)
    session_id = gateway.store.create_session(agent_id="writer", model="model-a")
    assert answered_by(gateway, fake_llm, session_id) == "model-b"
    assert shown(gateway, session_id) == {
        "sessionId": session_id,
        "agentId": "writer",
        "id": chosen,
        "name": "writer-chat",
        "model": "model-b",
        "source": "agent",
        "detail": None,
    }
    gateway.store.set_agent("reader")
    other = gateway.store.create_session(agent_id="reader", model="model-a")
    assert answered_by(gateway, fake_llm, other) == "model-a"
    assert shown(gateway, other)["source"] == "model"
    plain = gateway.store.create_session()
    assert answered_by(gateway, fake_llm, plain) == "house-model"
    assert shown(gateway, plain)["source"] == "system"


def test_adding_a_channel_does_not_change_which_channel_answers(
    gateway: Gateway, fake_llm: FakeLLM
) -> None:
    add(gateway, fake_llm, "house", "house-model")
    add(gateway, fake_llm, "serves-a", "model-a")
    add(gateway, fake_llm, "writer-chat", "model-b")
    choose(gateway, "writer", "writer-chat")  # by name
    assert chat_channel_of(gateway, "writer") is not None
    sessions = [
        gateway.store.create_session(),  # the system's channel
        gateway.store.create_session(model="model-a"),  # the channel serving its model
        gateway.store.create_session(agent_id="writer", model="model-a"),  # the agent's choice
        gateway.store.create_session(model="unserved"),  # no channel serves it: the system's
    ]
    before = [answered_by(gateway, fake_llm, s) for s in sessions]
    assert before == ["house-model", "model-a", "model-b", "house-model"]
    shown_before = [shown(gateway, s) for s in sessions]
    # what an operator adds later: a chat channel first in no order, another serving model-a,
    # one for the agent's model, an auxiliary one
    add(gateway, fake_llm, "another-chat", "model-c")
    add(gateway, fake_llm, "serves-a-too", "model-a")
    add(gateway, fake_llm, "serves-b-too", "model-b")
    add(gateway, fake_llm, "aux", "gpt-4o-mini", auxiliary=True, default=True)
    assert [answered_by(gateway, fake_llm, s) for s in sessions] == before
    assert [shown(gateway, s) for s in sessions] == shown_before


def test_without_a_system_channel_an_added_channel_does_not_take_the_offline_sessions(
    gateway: Gateway, fake_llm: FakeLLM
) -> None:
    """The bug the issue names: in the embedded mode the offline model answers; adding any
    channel used to make it every session's chat model."""
    models = gateway.resources.turns.models
    models.system, models.fallback = None, OfflineChatModel()
    session_id = gateway.store.create_session()
    assert shown(gateway, session_id)["source"] == "offline"
    add(gateway, fake_llm, "new-chat", "chat-1")
    answer = say(gateway, fake_llm, session_id)
    assert answer.status_code == 200, answer.text
    assert "(offline model)" in answer.json()["reply"]["content"]
    assert fake_llm.requests == [] and shown(gateway, session_id)["source"] == "offline"


def test_no_channel_to_answer_is_no_chat_model_naming_the_setting(
    gateway: Gateway, fake_llm: FakeLLM
) -> None:
    add(gateway, fake_llm, "chat", "chat-1")  # "house", which the setting names, is not there
    session_id = gateway.store.create_session()
    answer = say(gateway, fake_llm, session_id)
    assert answer.status_code == 409
    error = answer.json()["error"]
    assert error["code"] == "no_chat_model" and "COMPACTION_CHAT_CHANNEL" in error["message"]
    assert "'house'" in error["message"]
    assert gateway.store.load_history(session_id) == [] and fake_llm.requests == []
    body = shown(gateway, session_id)
    assert (body["source"], body["id"]) == ("none", None)
    assert "COMPACTION_CHAT_CHANNEL" in body["detail"]
    gateway.resources.turns.models.system = None
    assert "give the agent a chat channel" in shown(gateway, session_id)["detail"]


def test_removing_an_agents_chat_channel_is_refused_then_clears_the_choice(
    gateway: Gateway, fake_llm: FakeLLM
) -> None:
    add(gateway, fake_llm, "house", "house-model")
    chosen = add(gateway, fake_llm, "writer-chat", "model-b")
    choose(gateway, "writer", chosen)
    choose(gateway, "editor", chosen)
    session_id = gateway.store.create_session(agent_id="writer")
    assert answered_by(gateway, fake_llm, session_id) == "model-b"

    refused = gateway.client.delete(f"/api/channels/{chosen}")
    assert refused.status_code == 409
    message = refused.json()["error"]["message"]
    assert "agents editor, writer chat with it" in message and "--force" in message
    assert chat_channel_of(gateway, "writer") == chosen

    removed = gateway.client.delete(f"/api/channels/{chosen}", params={"force": "true"})
    assert removed.status_code == 200, removed.text
    assert removed.json()["chatAgents"] == ["editor", "writer"]
    assert removed.json()["agents"] == []
    assert chat_channel_of(gateway, "writer") is None
    assert chat_channel_of(gateway, "editor") is None
    assert gateway.client.get("/api/agents/writer").json()["chatChannelId"] is None
    assert answered_by(gateway, fake_llm, session_id) == "house-model"
    assert shown(gateway, session_id)["source"] == "system"


def test_an_unknown_session_has_no_chat_channel(gateway: Gateway) -> None:
    answer = gateway.client.get("/api/sessions/nope/chat-channel")
    assert answer.status_code == 404
    assert answer.json()["error"]["code"] == "session_not_found"
