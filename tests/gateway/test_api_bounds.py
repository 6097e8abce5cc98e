"""Bounds on what a client writes (docs/architecture.md, "The gateway"; docs/algorithm.md,
"Bounds"): a value no column can hold, a NUL, a session id no URL can reach, an out-of-range
budget is 400 ``invalid_request`` naming the field, never 503 ``db_error``; a message alone over
the session's threshold is refused where it is written (a turn, a new session, an import),
with the advice to split it in the user's language, and nothing is stored."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from compaction.core.messages import Message
from tests.gateway.conftest import Gateway
from tests.gateway.realtime_helpers import chat_channel, of_type, socket
from tests.llm_server import FakeLLM

LONG = "x" * 100_000
#: a window of 2,000 tokens: the threshold is 1,400
SMALL_WINDOW = {"context_window": 2_000}
HUGE_EN = "Here is the whole log file, please read it. " * 800  # ~35,000 characters
HUGE_ZH = "这是完整的日志文件，请仔细阅读并找出问题。" * 800


@pytest.fixture
def gateway_settings() -> dict[str, Any]:
    return SMALL_WINDOW


def refused(answer: httpx.Response, code: str = "invalid_request", status: int = 400) -> str:
    assert answer.status_code == status, answer.text
    error = answer.json()["error"]
    assert error["code"] == code, error
    assert LONG not in error["message"] and len(error["message"]) < 400
    message: str = error["message"]
    return message


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"id": "tenant/chat"}, "id"),
        ({"id": "."}, "id"),
        ({"id": LONG}, "id"),
        ({"id": "s\x00"}, "id"),
        ({"agentId": LONG}, "agentId"),
        ({"agentId": "a\x00"}, "agentId"),
        ({"model": LONG}, "model"),
        ({"model": "m\x00"}, "model"),
    ],
)
def test_a_new_session_with_a_name_no_column_holds_is_400_naming_it(
    gateway: Gateway, body: dict[str, Any], field: str
) -> None:
    message = refused(gateway.client.post("/api/sessions", json=body))
    assert field in message
    assert gateway.client.get("/api/sessions").json()["sessions"] == []


def test_an_import_naming_an_agent_no_column_holds_is_refused(gateway: Gateway) -> None:
    one = [{"role": "user", "content": "hello"}]
    agent = refused(
        gateway.client.post("/api/sessions/s1/import", json=one, params={"agentId": "a" * 1_000})
    )
    assert "agentId" in agent
    assert gateway.client.get("/api/sessions").json()["sessions"] == []


@pytest.mark.parametrize(
    ("agent", "body", "field"),
    [
        ("a" * 1_000, {"thresholdPercent": 70}, "agent id"),
        ("a%00", {"thresholdPercent": 70}, "agent id"),
        ("a1", {"tokenBudget": 10**12}, "tokenBudget"),
        ("a1", {"tokenBudget": -5}, "tokenBudget"),
        ("a1", {"contextWindow": 10**12}, "contextWindow"),
        ("a1", {"model": LONG}, "model"),
        ("a1", {"compactionStrategy": LONG}, "compactionStrategy"),
    ],
)
def test_agent_settings_out_of_range_are_400_naming_the_field(
    gateway: Gateway, agent: str, body: dict[str, Any], field: str
) -> None:
    message = refused(gateway.client.put(f"/api/agents/{agent}", json=body))
    assert field in message


def test_a_turn_over_the_threshold_is_refused_with_the_advice_to_split_it(
    gateway: Gateway, fake_llm: FakeLLM
) -> None:
    chat_channel(gateway, fake_llm)
    session_id = gateway.store.create_session(
        "s1", model="chat-1", messages=[Message(role="user", content="hi")]
    )
    for text, advice in ((HUGE_EN, "split"), (HUGE_ZH, "拆分")):
        answer = gateway.client.post(f"/api/sessions/{session_id}/messages", json={"content": text})
        message = refused(answer, "message_too_large")
        assert advice in message and "1,400" in message
    assert [s.message.content for s in gateway.store.load_history(session_id)] == ["hi"]
    assert fake_llm.requests == []


def test_an_import_naming_the_message_over_the_threshold(gateway: Gateway) -> None:
    transcript = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": HUGE_EN},
    ]
    for answer in (
        gateway.client.post("/api/sessions/s1/import", json=transcript),
        gateway.client.post("/api/sessions", json={"id": "s2", "messages": transcript}),
    ):
        message = refused(answer, "message_too_large")
        assert "message 2" in message and "split" in message
    assert gateway.client.get("/api/sessions").json()["sessions"] == []
    gateway.client.post("/api/sessions/s1/import", json=transcript[:2]).raise_for_status()
    answer = gateway.client.post("/api/sessions/s1/import", json=transcript[2:])
    assert "message 0" in refused(answer, "message_too_large")
    assert len(gateway.store.load_history("s1")) == 2


def test_a_socket_message_over_the_threshold_is_refused_and_not_stored(
    gateway: Gateway, fake_llm: FakeLLM
) -> None:
    chat_channel(gateway, fake_llm)
    session_id = gateway.store.create_session(
        "s1", model="chat-1", messages=[Message(role="user", content="hi")]
    )
    with socket(gateway, session_id) as ws:
        ws.send({"type": "message", "content": HUGE_ZH})
        (answer,) = ws.until(of_type("error"))
    assert answer["error"]["code"] == "message_too_large"
    assert "拆分" in answer["error"]["message"]
    assert [s.message.content for s in gateway.store.load_history(session_id)] == ["hi"]
    assert fake_llm.requests == []


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": LONG}, "name"),
        ({"name": "a\x00"}, "name"),
        ({"model": LONG}, "model"),
        ({"baseUrl": "https://example.com/" + LONG}, "baseUrl"),
        ({"apiKey": "sk-" + LONG}, "apiKey"),
        ({"apiKey": "sk-\x00"}, "apiKey"),
        ({"apiKeyEnv": "X" * 200 + "_API_KEY"}, "apiKeyEnv"),
    ],
)
def test_a_channel_with_a_value_no_column_holds_is_400_naming_it(
    gateway: Gateway, body: dict[str, Any], field: str
) -> None:
    channel = {"name": "c1", "provider": "openai", "model": "m", **body}
    assert field in refused(gateway.client.post("/api/channels", json=channel))
    gateway.client.post(
        "/api/channels", json={"name": "c2", "provider": "openai", "model": "m"}
    ).raise_for_status()
    assert field in refused(gateway.client.patch("/api/channels/c2", json=body))
    assert [c["name"] for c in gateway.client.get("/api/channels").json()["channels"]] == ["c2"]
