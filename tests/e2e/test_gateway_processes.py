"""Two ``compaction gateway`` processes on one PostgreSQL and one Redis, as the Procfile runs any
number of them (docs/architecture.md, "The gateway"): the turns of one session never interleave
whichever gateway takes them (a second is 409 ``busy``), and a message stored through one
gateway reaches the sockets of the session on the other."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect

from compaction.store import Store, make_engine, make_sessionmaker
from compaction.store.migrate import upgrade
from tests.e2e.test_cli_gateway import gateway, new_user
from tests.llm_server import FakeLLM, Reply
from tests.services import RedisNamespace, create_database, drop_database

TOKEN = "a-long-enough-gateway-token-0123456789"
WAIT_S = 30.0


@pytest.fixture
def two_gateways(
    tmp_path: Path, redis_namespace: RedisNamespace, fake_llm: FakeLLM
) -> Iterator[list[httpx.Client]]:
    """Two gateways on the test's database and Redis names, a chat channel on the fake LLM;
    a client of each, with the token."""
    name, database = create_database()
    engine = make_engine(database)
    try:
        upgrade(database)
        Store(make_sessionmaker(engine)).add_channel(
            "chat",
            provider="openai-compatible",
            model="chat-1",
            base_url=fake_llm.url_for("openai-compatible"),
            api_key="sk-test-chat-0123456789abcdef",
        )
        env = new_user(
            tmp_path / "home",
            COMPACTION_DATABASE_URL=database,
            COMPACTION_GATEWAY_TOKEN=TOKEN,
            **redis_namespace.env(),
        )
        with ExitStack() as stack:
            clients = []
            for folder in (tmp_path / "a", tmp_path / "b"):
                folder.mkdir()
                url, _process = stack.enter_context(gateway(env, folder))
                headers = {"Authorization": f"Bearer {TOKEN}"}
                client = httpx.Client(base_url=url, headers=headers, timeout=WAIT_S)
                clients.append(stack.enter_context(client))
            yield clients
    finally:
        engine.dispose()
        drop_database(name)


def roles(client: httpx.Client, session_id: str) -> list[str]:
    rows = client.get(f"/api/sessions/{session_id}/history", params={"view": "full"})
    return [row["role"] for row in rows.json()["messages"]]


def test_concurrent_turns_through_two_gateways_never_interleave(
    two_gateways: list[httpx.Client], fake_llm: FakeLLM
) -> None:
    first, second = two_gateways
    fake_llm.script(Reply(text="slow answer", delay_s=0.5))
    session_id = first.post("/api/sessions", json={"model": "chat-1"}).json()["id"]
    answers: list[httpx.Response] = []

    def turn(client: httpx.Client, n: int) -> None:
        sent = client.post(f"/api/sessions/{session_id}/messages", json={"content": f"q{n}"})
        answers.append(sent)

    for _round in range(3):
        threads = [
            threading.Thread(target=turn, args=(client, n))
            for n, client in enumerate([first, second, first, second])
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(WAIT_S)
    answered = [a for a in answers if a.status_code == 200]
    refused = [a for a in answers if a.status_code != 200]
    assert len(answered) >= 3 and len(answers) == 12
    assert all(a.status_code == 409 and a.json()["error"]["code"] == "busy" for a in refused)
    stored = roles(second, session_id)
    assert stored == ["user", "assistant"] * len(answered)  # never two in a row
    # each model call saw every earlier answer: one history, not one per gateway
    sizes = [len(r.body["messages"]) for r in fake_llm.requests]
    assert sizes == list(range(1, 2 * len(answered), 2))


def types(objects: list[dict[str, Any]]) -> list[str]:
    return [str(o["type"]) for o in objects]


def test_a_socket_on_one_gateway_gets_the_messages_stored_through_the_other(
    two_gateways: list[httpx.Client], fake_llm: FakeLLM
) -> None:
    first, second = two_gateways
    fake_llm.script(Reply(text="From the other gateway."))
    session_id = first.post("/api/sessions", json={"model": "chat-1"}).json()["id"]
    ws_url = "ws" + str(second.base_url).removeprefix("http").rstrip("/")
    with connect(f"{ws_url}/ws/sessions/{session_id}?token={TOKEN}", open_timeout=WAIT_S) as ws:
        answer = first.post(f"/api/sessions/{session_id}/messages", json={"content": "hi"})
        assert answer.status_code == 200, answer.text
        seen: list[dict[str, Any]] = []
        while types(seen).count("message") < 2 or "token_update" not in types(seen):
            seen.append(json.loads(ws.recv(timeout=WAIT_S)))
    messages = [o["message"] for o in seen if o["type"] == "message"]
    assert [(m["role"], m["content"]) for m in messages] == [
        ("user", "hi"),
        ("assistant", "From the other gateway."),
    ]
    assert messages[-1] == answer.json()["reply"]
