"""The gate before an automatic compaction through HTTP and the socket (docs/architecture.md,
"The gate"): an agent's ``autoCompact`` mode decides what a turn over the threshold does (``on``
enqueues and waits, ``ask`` does not and its ``token_update`` says ``due``, ``off`` does not);
a turn that would not fit the window compacts first in every mode; past the warning level the
``token_update`` on ``/ws/sessions/{id}`` carries the warning, with the turns left once the
recent growth is known. The agent's settings over ``GET/PUT /api/agents/{id}``."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from compaction.core.tokens import estimate_messages_tokens
from compaction.service.queue import compaction_queue, pending_and_running
from tests.fakes import conversation
from tests.gateway.conftest import Gateway
from tests.gateway.realtime_helpers import chat_channel, of_type, socket
from tests.llm_server import FakeLLM, Reply

#: threshold 2,800 estimated tokens (70%), warning level 2,400 (60%)
WINDOW = 4_000
#: past the threshold, below the window
OVER = 20
#: past the window: the next call would not fit
FULL = 24
#: between the warning level and the threshold
NEAR = 15


@pytest.fixture
def gateway_settings() -> dict[str, Any]:
    return {"context_window": WINDOW}


def agent(gateway: Gateway, name: str, **body: Any) -> dict[str, Any]:
    answer = gateway.client.put(f"/api/agents/{name}", json=body)
    assert answer.status_code == 200, answer.text
    found: dict[str, Any] = answer.json()
    return found


def session(gateway: Gateway, fake: FakeLLM, turns: int, mode: str | None) -> str:
    """A session of ``turns`` turns whose agent has ``mode`` (``None``: left blank)."""
    gateway.auxiliary(fake)
    chat_channel(gateway, fake)
    name = f"agent-{mode or 'blank'}"
    agent(gateway, name, **({"autoCompact": mode} if mode else {}))
    messages = conversation(turns)
    assert estimate_messages_tokens(conversation(NEAR)) >= WINDOW * 60 // 100
    return gateway.store.create_session("s", agent_id=name, model="chat-1", messages=messages)


def send(gateway: Gateway, session_id: str, content: str = "And now?") -> dict[str, Any]:
    answer = gateway.client.post(f"/api/sessions/{session_id}/messages", json={"content": content})
    assert answer.status_code == 200, answer.text
    found: dict[str, Any] = answer.json()
    return found


def nothing_queued(gateway: Gateway, session_id: str) -> bool:
    producers = gateway.resources.producers
    queue = compaction_queue(producers.redis, producers.settings.queue_name)
    pending = pending_and_running(producers.redis, producers.settings.channel_prefix, session_id)
    return queue.count == 0 and pending == (None, None)


def decisions(gateway: Gateway, session_id: str) -> list[str]:
    return [stat.decision for stat in gateway.store.token_stats(session_id)]


def drained_turn(gateway: Gateway, session_id: str) -> dict[str, Any]:
    """A turn that waits for the compaction it enqueued, the worker run meanwhile."""
    result: dict[str, Any] = {}
    turn = threading.Thread(target=lambda: result.update(send(gateway, session_id)), daemon=True)
    turn.start()
    while turn.is_alive() and nothing_queued(gateway, session_id):
        turn.join(0.02)
    gateway.drain()
    turn.join(30)
    return result


def test_the_agent_settings_round_trip(gateway: Gateway, fake_llm: FakeLLM) -> None:
    chat = chat_channel(gateway, fake_llm)
    aux = gateway.auxiliary(fake_llm)
    row = agent(gateway, "a", autoCompact="ask", warnPercent=55, chatChannel=chat.name)
    assert (row["autoCompact"], row["warnPercent"], row["chatChannelId"]) == ("ask", 55, chat.id)
    assert row["chatChannel"] == {"id": chat.id, "name": chat.name}
    assert row["effective"]["autoCompact"] == {
        "value": "ask",
        "source": "agent",
        "setting": "COMPACTION_AUTO_COMPACT",
    }
    assert row["effective"]["warnPercent"]["value"] == 55
    assert gateway.client.get("/api/agents/a").json() == row
    cleared = agent(gateway, "a", autoCompact=None, warnPercent=None, chatChannel=None)
    assert (cleared["autoCompact"], cleared["warnPercent"], cleared["chatChannel"]) == (
        None,
        None,
        None,
    )
    assert cleared["effective"]["autoCompact"]["value"] == "on"  # the seed's default
    assert cleared["effective"]["warnPercent"] == {
        "value": None,
        "source": "system",
        "setting": "COMPACTION_WARN_PERCENT",
    }
    # an auxiliary channel does not answer chat turns; an unknown one is not there
    for channel in (aux.name, "nope"):
        refused = gateway.client.put("/api/agents/a", json={"chatChannel": channel})
        assert refused.status_code == 400 and refused.json()["error"]["code"] == "invalid_request"


@pytest.mark.parametrize(
    ("body", "code", "words"),
    [
        ({"warnPercent": 70}, "invalid_config", "must be below the threshold of 70%"),
        ({"thresholdPercent": 50, "warnPercent": 60}, "invalid_config", "below the threshold"),
        ({"warnPercent": 4}, "invalid_request", "warnPercent"),
        ({"autoCompact": "sometimes"}, "invalid_request", "autoCompact"),
    ],
)
def test_refused_settings_change_nothing(
    gateway: Gateway, body: dict[str, Any], code: str, words: str
) -> None:
    before = agent(gateway, "a", warnPercent=40)
    refused = gateway.client.put("/api/agents/a", json=body)
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == code
    assert words in refused.json()["error"]["message"]
    assert gateway.client.get("/api/agents/a").json() == before


def test_on_by_default_enqueues_and_compacts_first(gateway: Gateway, fake_llm: FakeLLM) -> None:
    """An agent whose settings are blank: the seed's behaviour, ``on``."""
    session_id = session(gateway, fake_llm, OVER, None)
    fake_llm.script(Reply(), Reply(text="Answered from the compacted view."))
    body = drained_turn(gateway, session_id)
    assert body["ensured"]["status"] == "compacted"
    assert decisions(gateway, session_id) == ["compacted"]


def test_ask_does_not_hold_the_turn_and_says_due(gateway: Gateway, fake_llm: FakeLLM) -> None:
    session_id = session(gateway, fake_llm, OVER, "ask")
    fake_llm.script(Reply(text="Answered in full."))
    with socket(gateway, session_id) as ws:
        body = send(gateway, session_id)
        update = ws.until(of_type("token_update"))[-1]
    assert body["ensured"]["status"] == "asked"
    assert nothing_queued(gateway, session_id)
    warning = update["warning"]
    assert (warning["mode"], warning["due"], warning["threshold"]) == ("ask", True, 70.0)
    assert warning["percent"] > 70
    assert decisions(gateway, session_id) == ["asked"]
    assert gateway.store.runs(session_id) == []
    # the console's band on load: context stats carry the same warning
    stats = gateway.client.get(f"/api/sessions/{session_id}/context-stats").json()
    assert (stats["warning"]["mode"], stats["warning"]["due"]) == ("ask", True)


def test_off_waits_for_compact(gateway: Gateway, fake_llm: FakeLLM) -> None:
    session_id = session(gateway, fake_llm, OVER, "off")
    fake_llm.script(Reply(text="Answered in full."))
    with socket(gateway, session_id) as ws:
        body = send(gateway, session_id)
        update = ws.until(of_type("token_update"))[-1]
    assert body["ensured"]["status"] == "manual_only"
    assert nothing_queued(gateway, session_id)
    assert (update["warning"]["mode"], update["warning"]["due"]) == ("off", False)
    assert decisions(gateway, session_id) == ["manual_only"]


@pytest.mark.parametrize("mode", ["ask", "off"])
def test_a_call_that_would_not_fit_compacts_first(
    gateway: Gateway, fake_llm: FakeLLM, mode: str
) -> None:
    """The hard limit is never crossed: the model gets the compacted view."""
    session_id = session(gateway, fake_llm, FULL, mode)
    assert estimate_messages_tokens(conversation(FULL)) >= WINDOW
    fake_llm.script(Reply(), Reply(text="Answered from the compacted view."))
    body = drained_turn(gateway, session_id)
    assert body["ensured"]["status"] == "compacted"
    assert body["ensured"]["usedTokens"] < WINDOW * 70 // 100
    (run,) = gateway.store.runs(session_id)
    assert (run.reason, run.status) == ("auto", "succeeded")


def test_the_warning_crosses_its_level_with_the_turns_left(
    gateway: Gateway, fake_llm: FakeLLM
) -> None:
    """Below the warning level no warning; past it, the warning; once two turns are recorded,
    the estimate of the turns left to the threshold."""
    session_id = session(gateway, fake_llm, NEAR - 1, "ask")
    fake_llm.script(*[Reply(text="A reply of some length " * 6) for _ in range(3)])
    updates = []
    with socket(gateway, session_id) as ws:
        for _ in range(3):
            send(gateway, session_id, "Please inspect directory /srv/next and report in full.")
            updates.append(ws.until(of_type("token_update"))[-1])
    warned = [u for u in updates if u.get("warning")]
    assert warned, [u["context"]["percent"] for u in updates]
    for update in updates:
        over = update["context"]["percent"] >= 60
        assert bool(update.get("warning")) == over
    last = updates[-1]["warning"]
    assert (last["mode"], last["due"]) == ("ask", False)
    assert isinstance(last["turnsLeft"], int) and last["turnsLeft"] >= 1
