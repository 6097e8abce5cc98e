"""A conversation turn through the gateway (gateway/chat.py, gateway/chat_model.py,
POST /api/sessions/{id}/messages and the socket's message): the chat model behind a channel
(the fake LLM over OpenAI's and Anthropic's wire formats), the stored messages on every socket,
token_update with the model's usage, and the refusals."""

from __future__ import annotations

import httpx
import pytest

from compaction.core.messages import Message
from compaction.gateway.chat_model import OfflineChatModel
from tests.gateway.conftest import Gateway
from tests.gateway.realtime_helpers import chat_channel, of_type, socket, types
from tests.llm_server import FakeLLM, Reply

HELLO = "Hello there, which files did you look at?"


def say(gateway: Gateway, session_id: str, content: str, **more: str) -> httpx.Response:
    return gateway.client.post(
        f"/api/sessions/{session_id}/messages", json={"content": content, **more}
    )


def chat_requests(fake: FakeLLM, model: str = "chat-1") -> list[dict[str, object]]:
    return [r.body for r in fake.requests if r.body.get("model") == model]


def test_a_turn_stores_both_messages_and_publishes_the_usage(
    gateway: Gateway, fake_llm: FakeLLM
) -> None:
    chat_channel(gateway, fake_llm)
    session_id = gateway.store.create_session(
        "s1", model="chat-1", messages=[Message(role="system", content="Be brief.")]
    )
    fake_llm.script(Reply(text="I looked at three files."))
    with socket(gateway, session_id) as ws:
        answer = say(gateway, session_id, HELLO)
        seen = ws.until(of_type("token_update"))
    assert answer.status_code == 200, answer.text
    body = answer.json()
    reply = body["reply"]
    assert (reply["role"], reply["content"]) == ("assistant", "I looked at three files.")
    assert body["ensured"]["status"] == "below_threshold" and body["ensured"]["usedTokens"] > 0
    usage = body["usage"]
    assert usage["apiCalls"] == 1 and usage["inputTokens"] > 0 and usage["outputTokens"] > 0
    assert usage["totalTokens"] == usage["inputTokens"] + usage["outputTokens"]
    assert types(seen) == ["message", "message", "token_update"]
    user, assistant, update = seen
    assert (user["message"]["role"], user["message"]["content"]) == ("user", HELLO)
    assert assistant["message"] == reply
    assert update["current"] == usage and update["sessionId"] == session_id
    (sent,) = chat_requests(fake_llm)
    assert sent["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": HELLO},
    ]
    stored = [(s.message.role, s.message.content) for s in gateway.store.load_history(session_id)]
    assert stored[1:] == [("user", HELLO), ("assistant", "I looked at three files.")]
    assert gateway.store.load_history(session_id)[-1].id == reply["id"]


def test_an_anthropic_channel_gets_the_system_prompt_beside_the_messages(
    gateway: Gateway, fake_llm: FakeLLM
) -> None:
    chat_channel(gateway, fake_llm, provider="anthropic", model="claude-chat")
    session_id = gateway.store.create_session(
        model="claude-chat", messages=[Message(role="system", content="Be brief.")]
    )
    fake_llm.script(Reply(text="From Claude."))
    answer = say(gateway, session_id, HELLO)
    assert answer.json()["reply"]["content"] == "From Claude."
    (request,) = fake_llm.requests
    assert request.path.endswith("/v1/messages")
    assert request.body["system"] == "Be brief."
    assert request.body["messages"] == [{"role": "user", "content": HELLO}]


def test_the_channel_serving_the_model_else_the_first_for_conversation(
    gateway: Gateway, fake_llm: FakeLLM
) -> None:
    gateway.auxiliary(fake_llm)  # gpt-4o-mini, only for summaries unless a session names it
    chat_channel(gateway, fake_llm, model="chat-1")
    chat_channel(gateway, fake_llm, provider="deepseek", model="chat-2")
    for model, expected in [("chat-2", "chat-2"), ("gpt-4o-mini", "gpt-4o-mini"), (None, "chat-1")]:
        fake_llm.script(Reply(text="ok"))
        session_id = gateway.store.create_session(model=model)
        answer = say(gateway, session_id, "hi")
        assert answer.status_code == 200, answer.text
        assert [r.body["model"] for r in fake_llm.requests] == [expected]
    fake_llm.script(Reply(text="ok"))
    say(gateway, session_id, "hi", model="chat-2")
    assert [r.body["model"] for r in fake_llm.requests] == ["chat-2"]  # the turn's own model


def test_no_chat_model_is_409_and_stores_nothing(gateway: Gateway, fake_llm: FakeLLM) -> None:
    gateway.auxiliary(fake_llm)  # an auxiliary channel only: it writes summaries, it does not chat
    session_id = gateway.store.create_session()
    answer = say(gateway, session_id, "hi")
    assert answer.status_code == 409
    assert answer.json()["error"]["code"] == "no_chat_model"
    assert gateway.store.load_history(session_id) == [] and fake_llm.requests == []


def test_the_fallback_model_answers_when_no_channel_does(gateway: Gateway) -> None:
    gateway.resources.turns.models.fallback = OfflineChatModel()
    session_id = gateway.store.create_session()
    answers = [say(gateway, session_id, "  two\nwords ") for _ in range(2)]
    first, second = (a.json()["reply"]["content"] for a in answers)
    assert "“two words”" in first and first == second  # the user's words, deterministic
    assert answers[0].json()["usage"]["inputTokens"] > 0


def test_a_failing_model_is_502_without_the_key_and_keeps_the_users_message(
    gateway: Gateway, fake_llm: FakeLLM
) -> None:
    chat_channel(gateway, fake_llm)
    session_id = gateway.store.create_session()
    fake_llm.script(Reply(status=500, error="boom sk-test-chat-0123456789abcdef"))
    answer = say(gateway, session_id, "hi")
    assert answer.status_code == 502
    error = answer.json()["error"]
    assert error["code"] == "llm_error" and "500" in error["message"]
    assert "sk-test-chat" not in answer.text
    assert [s.message.role for s in gateway.store.load_history(session_id)] == ["user"]


@pytest.mark.parametrize(
    ("session_id", "body", "status", "code"),
    [
        ("nobody", '{"content": "hi"}', 404, "session_not_found"),
        ("s", '{"content": ""}', 400, "invalid_request"),
        ("s", '{"content": "hi", "extra": 1}', 400, "invalid_request"),
        ("s", '{"content": "\\ud800"}', 400, "invalid_request"),  # a lone surrogate
    ],
)
def test_refused_turns(
    gateway: Gateway, fake_llm: FakeLLM, session_id: str, body: str, status: int, code: str
) -> None:
    chat_channel(gateway, fake_llm)
    gateway.store.create_session("s")
    answer = gateway.client.post(
        f"/api/sessions/{session_id}/messages",
        content=body,
        headers={"Content-Type": "application/json"},
    )
    assert (answer.status_code, answer.json()["error"]["code"]) == (status, code)
    assert gateway.store.load_history("s") == [] and fake_llm.requests == []


def test_a_message_from_the_socket_is_a_turn(gateway: Gateway, fake_llm: FakeLLM) -> None:
    chat_channel(gateway, fake_llm)
    session_id = gateway.store.create_session()
    fake_llm.script(Reply(text="Socket reply."))
    with socket(gateway, session_id) as ws, socket(gateway, session_id) as other:
        ws.send({"type": "message", "content": HELLO})
        seen = ws.until(of_type("token_update"))
        also = other.until(of_type("token_update"))
    assert types(seen) == ["message", "message", "token_update"]
    assert seen[1]["message"]["content"] == "Socket reply."
    assert [o["type"] for o in also] == types(seen)


def test_a_failed_socket_turn_is_an_error_object(gateway: Gateway) -> None:
    session_id = gateway.store.create_session()
    with socket(gateway, session_id) as ws:
        ws.send({"type": "message", "content": HELLO})
        got = ws.receive()
    assert got == {
        "type": "error",
        "error": {"code": "no_chat_model", "message": got["error"]["message"]},
    }
