"""The bounds of a turn (gateway/chat.py, gateway/routes/realtime.py; docs/architecture.md, "The
gateway", "A turn"): one turn of a session at a time (a second is 409 ``busy`` and stores
nothing), a turn refused because Redis is down stores nothing, a reply past the cap is 502
``reply_too_long`` with nothing of it stored, and a socket flooding messages gets one turn at
most, cancelled when the socket closes before its model call."""

from __future__ import annotations

import contextlib
import json
import secrets
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import redis
from pydantic import SecretStr
from websockets.exceptions import ConnectionClosed

from compaction.gateway import Resources
from compaction.gateway.chat_model import MAX_REPLY_TOKENS
from compaction.gateway.resources import GatewayOptions
from compaction.producers import trigger
from compaction.producers.context import Producers
from compaction.service.settings import Settings
from compaction.store import Store, make_engine, make_sessionmaker
from tests.fakes import conversation
from tests.gateway.conftest import Gateway, serve
from tests.gateway.realtime_helpers import WAIT_S, Socket, chat_channel, socket
from tests.llm_server import FakeLLM, Reply
from tests.services import PrivateRedis, RedisNamespace, empty_tables

FLOOD = 2_000


def say(gateway: Gateway, session_id: str, content: str) -> httpx.Response:
    return gateway.client.post(f"/api/sessions/{session_id}/messages", json={"content": content})


def roles(gateway: Gateway, session_id: str) -> list[str]:
    return [s.message.role for s in gateway.store.load_history(session_id)]


def chat_calls(fake: FakeLLM) -> int:
    return sum(r.body.get("model") == "chat-1" for r in fake.requests)


def eventually(check: Any, what: str, timeout: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def test_a_second_turn_while_one_runs_is_409_busy_and_stores_nothing(
    gateway: Gateway, fake_llm: FakeLLM
) -> None:
    chat_channel(gateway, fake_llm)
    fake_llm.script(Reply(text="slow answer", delay_s=1.0))
    session_id = gateway.store.create_session("s", model="chat-1")
    first: list[httpx.Response] = []
    running = threading.Thread(target=lambda: first.append(say(gateway, session_id, "one")))
    running.start()
    eventually(lambda: roles(gateway, session_id) == ["user"], "the first turn did not start")
    second = say(gateway, session_id, "two")
    running.join(WAIT_S)
    assert second.status_code == 409, second.text
    assert second.json()["error"]["code"] == "busy"
    assert first[0].status_code == 200
    assert roles(gateway, session_id) == ["user", "assistant"]
    assert chat_calls(fake_llm) == 1
    assert say(gateway, session_id, "three").status_code == 200  # the lock was released
    assert roles(gateway, session_id) == ["user", "assistant"] * 2


@pytest.fixture
def private_redis() -> Iterator[PrivateRedis]:
    server = PrivateRedis()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def own_redis_gateway(gateway_database: str, private_redis: PrivateRedis) -> Iterator[Gateway]:
    """A gateway on a redis-server of the test's own, which the test may stop."""
    settings = Settings(database_url=gateway_database, redis_url=private_redis.url)
    engine = make_engine(gateway_database)
    empty_tables(engine)
    factory = make_sessionmaker(engine)
    client = redis.Redis.from_url(private_redis.url, socket_timeout=5)
    token = secrets.token_urlsafe(16)
    resources = Resources(
        settings=settings,
        producers=Producers(settings=settings, store=Store(factory), redis=client),
        options=GatewayOptions(token=SecretStr(token)),
    )
    namespace = RedisNamespace(prefix="compaction", queue="compaction", url=private_redis.url)
    headers = {"Authorization": f"Bearer {token}"}
    with serve(resources) as url, httpx.Client(base_url=url, headers=headers, timeout=30) as http:
        yield Gateway(url, token, resources, http, namespace)
    client.close()
    engine.dispose()


def test_a_turn_refused_because_redis_is_down_stores_nothing(
    own_redis_gateway: Gateway, private_redis: PrivateRedis, fake_llm: FakeLLM
) -> None:
    gateway = own_redis_gateway
    chat_channel(gateway, fake_llm)
    session_id = gateway.store.create_session(model="chat-1")
    private_redis.stop()
    refused = say(gateway, session_id, "hello?")
    assert refused.status_code == 503, refused.text
    assert refused.json()["error"]["code"] == "redis"
    assert roles(gateway, session_id) == [] and chat_calls(fake_llm) == 0
    private_redis.start()  # empty: the session's turn is not held
    fake_llm.script(Reply(text="back"))
    assert say(gateway, session_id, "hello?").status_code == 200
    assert roles(gateway, session_id) == ["user", "assistant"]  # never two user turns in a row


def test_a_reply_past_the_cap_is_502_reply_too_long_and_nothing_of_it_is_stored(
    gateway: Gateway, fake_llm: FakeLLM
) -> None:
    chat_channel(gateway, fake_llm)
    session_id = gateway.store.create_session(model="chat-1")
    huge = "flood " * 900_000  # 5.4 MB
    fake_llm.script(Reply(text=huge))
    with socket(gateway, session_id) as ws:
        answer = say(gateway, session_id, "tell me everything")
        fake_llm.script(Reply(text="short"))
        after = say(gateway, session_id, "the short version")
        shown = ws.until(lambda o: o.get("message", {}).get("role") == "assistant")
    assert answer.status_code == 502, answer.text[:200]
    error = answer.json()["error"]
    assert error["code"] == "reply_too_long" and str(MAX_REPLY_TOKENS) in error["message"]
    assert after.status_code == 200
    # never broadcast: the sockets got both user messages, then the short reply
    assert [o["message"]["content"] for o in shown if o["type"] == "message"] == [
        "tell me everything",
        "the short version",
        "short",
    ]
    # the user's message is kept, as for any failed turn; nothing of the reply
    assert roles(gateway, session_id) == ["user", "user", "assistant"]
    assert all(len(s.message.content) < 100 for s in gateway.store.load_history(session_id))


def test_a_flood_of_socket_messages_is_one_turn_cancelled_when_the_socket_closes(
    gateway: Gateway, fake_llm: FakeLLM
) -> None:
    gateway.auxiliary(fake_llm)
    chat_channel(gateway, fake_llm)
    fake_llm.script(Reply(), Reply(text="answer"))  # the summary, then the chat model
    session_id = gateway.store.create_session(model="chat-1", messages=conversation(10))
    # a queued compaction holds the socket's turn before its model call
    assert trigger.request_manual(gateway.resources.producers, session_id).status == "enqueued"
    before = len(roles(gateway, session_id))
    with socket(gateway, session_id) as ws:
        # a client that does not read its answers falls behind and is closed (1013): the flood
        # may end there, which is the gateway defending itself
        with contextlib.suppress(ConnectionClosed):
            for n in range(FLOOD):
                ws.send({"type": "message", "content": f"spam {n}"})
        frames = frames_until_quiet(ws)
    time.sleep(0.5)  # the socket has closed: its turn is cancelled
    gateway.drain()  # the compaction the turn waited for is done now
    time.sleep(1.0)
    assert chat_calls(fake_llm) == 0  # no model call after the socket closed
    stored = gateway.store.load_history(session_id, "full")
    assert len([s for s in stored[before:] if s.message.role == "user"]) <= 1
    shown = [f for f in frames if f["type"] == "message"]
    assert len(shown) <= 1
    assert all(f["error"]["code"] == "busy" for f in frames if f["type"] == "error")


def frames_until_quiet(ws: Socket) -> list[dict[str, Any]]:
    """What the server sends until it is quiet for a second or closes the socket (a client
    that falls behind is closed)."""
    frames: list[dict[str, Any]] = []
    with contextlib.suppress(TimeoutError, ConnectionClosed):
        while True:
            frames.append(json.loads(ws.connection.recv(timeout=1.0)))
    return frames
