"""A system prompt alone over the threshold, through the gateway (compaction/core/system_prompt.py):
a turn is refused ``system_prompt_too_large`` with the advice to shorten it in the user's
language, before the user's message is stored (the history before the refusal is the history
after it, and no message is left unanswered), over HTTP and the socket; ``/compact`` says the
same, not ``nothing_to_compact``."""

from __future__ import annotations

from typing import Any

import pytest

from compaction.core.messages import Message
from tests.gateway.conftest import Gateway
from tests.gateway.realtime_helpers import chat_channel, of_type, socket
from tests.llm_server import FakeLLM

ADVICE = {"en": "shorten the system prompt", "zh": "请精简系统提示"}
SAID = {"en": "Please fix the failing build.", "zh": "请帮我修复构建失败的问题。"}


@pytest.fixture
def gateway_settings() -> dict[str, Any]:
    return {"context_window": 4_000}  # a threshold of 2,800 tokens


def session(gateway: Gateway) -> str:
    """Two system messages, each under the threshold, together over it."""
    return gateway.store.create_session(
        model="chat-1",
        messages=[
            Message(role="system", content="s" * 6_000),
            Message(role="system", content="t" * 6_000),
        ],
    )


def history(gateway: Gateway, session_id: str) -> list[tuple[str, str]]:
    return [(s.message.role, s.message.content) for s in gateway.store.load_history(session_id)]


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_turn_is_refused_with_the_advice_and_stores_nothing(
    gateway: Gateway, fake_llm: FakeLLM, language: str
) -> None:
    chat_channel(gateway, fake_llm)
    session_id = session(gateway)
    before = history(gateway, session_id)
    answer = gateway.client.post(
        f"/api/sessions/{session_id}/messages", json={"content": SAID[language]}
    )
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["code"] == "system_prompt_too_large" and ADVICE[language] in error["message"]
    assert history(gateway, session_id) == before and fake_llm.requests == []


def test_the_socket_answers_the_same_and_stores_nothing(
    gateway: Gateway, fake_llm: FakeLLM
) -> None:
    chat_channel(gateway, fake_llm)
    session_id = session(gateway)
    before = history(gateway, session_id)
    with socket(gateway, session_id) as ws:
        ws.send({"type": "message", "content": SAID["zh"]})
        (refused,) = ws.until(of_type("error"))
        ws.send({"type": "compact"})
        (compact,) = ws.until(of_type("error"))
    for error in (refused["error"], compact["error"]):
        assert error["code"] == "system_prompt_too_large"
    assert ADVICE["zh"] in refused["error"]["message"]
    assert history(gateway, session_id) == before and fake_llm.requests == []


def test_compact_says_system_prompt_too_large_not_nothing_to_compact(gateway: Gateway) -> None:
    session_id = session(gateway)
    gateway.store.append_messages(
        session_id,
        [Message(role="user", content=SAID["en"]), Message(role="assistant", content="On it.")],
    )
    answer = gateway.client.post(f"/api/sessions/{session_id}/compact", json={})
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["code"] == "system_prompt_too_large" and ADVICE["en"] in error["message"]
    runs = gateway.client.get(f"/api/sessions/{session_id}/runs").json()["runs"]
    assert runs == []  # nothing queued, nothing run
