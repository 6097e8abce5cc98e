"""A socket's next message right after its reply (gateway/routes/realtime.py; docs/architecture.md,
"Sockets"): the turn's reply is on the client's screen while its figures are still being recorded;
a user who answers at once is served once they are, not refused ``busy``."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.fakes import conversation
from tests.gateway.conftest import Gateway
from tests.gateway.realtime_helpers import chat_channel, of_type, socket
from tests.llm_server import FakeLLM, Reply


def test_a_message_sent_on_the_reply_waits_for_the_turns_figures(
    gateway: Gateway, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    chat_channel(gateway, fake_llm)
    fake_llm.script(Reply(text="first answer"), Reply(text="second answer"))
    session_id = gateway.store.create_session(model="chat-1", messages=conversation(4))
    ctx = gateway.resources.turns.ctx
    publish = ctx.publish_token_update

    def slow_publish(*args: Any, **kwargs: Any) -> Any:
        time.sleep(1.0)  # the turn's figures, after its reply went out
        return publish(*args, **kwargs)

    monkeypatch.setattr(ctx, "publish_token_update", slow_publish)
    with socket(gateway, session_id) as ws:
        ws.send({"type": "message", "content": "one"})
        ws.until(lambda f: f["type"] == "message" and f["message"]["role"] == "assistant")
        ws.send({"type": "message", "content": "two"})
        frames = ws.until(
            lambda f: (
                f["type"] == "error"
                or (f["type"] == "message" and f["message"]["content"] == "second answer")
            )
        )
    assert not [f for f in frames if of_type("error")(f)], frames
    contents = [r.message.content for r in gateway.store.load_history(session_id, "full")]
    assert contents[-4:] == ["one", "first answer", "two", "second answer"]
