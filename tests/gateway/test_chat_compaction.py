"""Turns and compactions (gateway/chat.py; docs/architecture.md, "The gateway"): a message sent
while a compaction is queued waits for it and is answered from the compacted view; a turn that
takes the session past its threshold compacts first (one turn at a time: test_chat_bounds.py)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from compaction.core.messages import SUMMARY_MARKER
from compaction.core.tokens import estimate_messages_tokens
from compaction.producers import trigger
from tests.fakes import conversation
from tests.gateway.conftest import Gateway
from tests.gateway.realtime_helpers import WAIT_S, chat_channel, of_type, socket, types
from tests.llm_server import FakeLLM, Reply

WINDOW = 4_000  # threshold 2,800 estimated tokens: 20 turns of conversation() are past it


@pytest.fixture
def gateway_settings() -> dict[str, Any]:
    return {"context_window": WINDOW}


class Turn(threading.Thread):
    """``POST /messages`` in a thread of its own: it blocks while the turn waits."""

    def __init__(self, gateway: Gateway, session_id: str, content: str) -> None:
        super().__init__(daemon=True)
        self.gateway, self.session_id, self.content = gateway, session_id, content
        self.response: httpx.Response | None = None

    def run(self) -> None:
        self.response = self.gateway.client.post(
            f"/api/sessions/{self.session_id}/messages", json={"content": self.content}
        )

    def result(self) -> dict[str, Any]:
        self.join(WAIT_S)
        assert self.response is not None and self.response.status_code == 200
        found: dict[str, Any] = self.response.json()
        return found


def eventually(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def chat_bodies(fake: FakeLLM) -> list[dict[str, Any]]:
    return [r.body for r in fake.requests if r.body.get("model") == "chat-1"]


def setup(gateway: Gateway, fake: FakeLLM, turns: int) -> str:
    gateway.auxiliary(fake)
    chat_channel(gateway, fake)
    fake.script(Reply(), Reply(text="Answered from the compacted view."))  # summary, then chat
    return gateway.store.create_session("s", model="chat-1", messages=conversation(turns))


def waiting_turn(gateway: Gateway, session_id: str, ws: Any) -> Turn:
    """A turn sent now, once it waits for the compaction: its message is stored and it has
    subscribed to the hub beside the socket."""
    turn = Turn(gateway, session_id, "And now?")
    turn.start()
    assert ws.receive()["message"]["content"] == "And now?"
    hub = gateway.resources.hub
    eventually(lambda: hub.subscribers(session_id) == 2, "the turn does not wait")
    time.sleep(0.2)
    assert turn.is_alive()  # held while the compaction is queued
    return turn


def test_a_message_sent_while_a_compaction_is_queued_waits_for_it(
    gateway: Gateway, fake_llm: FakeLLM
) -> None:
    session_id = setup(gateway, fake_llm, 10)  # under the threshold: only the /compact runs
    queued = trigger.request_manual(gateway.resources.producers, session_id)
    assert queued.status == "enqueued"
    with socket(gateway, session_id) as ws:
        turn = waiting_turn(gateway, session_id, ws)
        gateway.drain()  # the worker runs the compaction a moment later
        body = turn.result()
        seen = ws.until(lambda o: o["type"] == "message")
        final = ws.receive()
    assert types(seen) == ["compaction_start", "compaction_done", "token_update", "message"]
    assert seen[-1]["message"] == body["reply"]  # the reply came after compaction_done
    assert final["type"] == "token_update" and final["current"] == body["usage"]
    assert body["ensured"]["status"] == "compacted"
    (sent,) = chat_bodies(fake_llm)
    contents = [m["content"] for m in sent["messages"]]
    assert any(c and c.startswith(SUMMARY_MARKER) for c in contents)  # the compacted view
    assert len(contents) < 1 + 10 * 4 + 1 and contents[-1] == "And now?"
    assert body["ensured"]["usedTokens"] < estimate_messages_tokens(conversation(10))


def test_a_turn_past_the_threshold_compacts_first(gateway: Gateway, fake_llm: FakeLLM) -> None:
    session_id = setup(gateway, fake_llm, 20)
    with socket(gateway, session_id) as ws:
        turn = waiting_turn(gateway, session_id, ws)  # the turn's check enqueued an auto run
        gateway.drain()
        body = turn.result()
        seen = ws.until(of_type("message"))
    assert body["ensured"]["status"] == "compacted"
    assert types(seen)[:2] == ["compaction_start", "compaction_done"]
    assert seen[0]["reason"] == "auto"
    assert body["ensured"]["usedTokens"] < WINDOW * 70 // 100
