"""Helpers of the realtime and chat tests (``test_realtime*.py``, ``test_chat*.py``): a session
socket with the ``websockets`` client, a reader of the SSE stream, events published as a
worker would publish them, and a channel the chat model is answered on by the fake LLM."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
from websockets.sync.client import ClientConnection, connect

from compaction.core.contract import AnyEvent, ContextUsage, TokenUpdate
from compaction.service.events import EventPublisher
from compaction.store import ChannelConfig
from tests.gateway.conftest import Gateway
from tests.llm_server import FakeLLM

#: how long a test waits for one object (generous: the suite may run on a loaded machine)
WAIT_S = 20.0


@contextmanager
def socket(gateway: Gateway, session_id: str, *, token: str | None = None) -> Iterator[Socket]:
    url = f"{gateway.ws_url}/ws/sessions/{session_id}?token={token or gateway.token}"
    with connect(url, open_timeout=WAIT_S) as connection:
        yield Socket(connection)


class Socket:
    def __init__(self, connection: ClientConnection) -> None:
        self.connection = connection

    def send(self, data: dict[str, Any]) -> None:
        self.connection.send(json.dumps(data))

    def receive(self) -> dict[str, Any]:
        found: dict[str, Any] = json.loads(self.connection.recv(timeout=WAIT_S))
        return found

    def until(self, wanted: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
        """Every object received, up to and including the first one ``wanted``."""
        seen = [self.receive()]
        while not wanted(seen[-1]):
            seen.append(self.receive())
        return seen


def of_type(kind: str) -> Callable[[dict[str, Any]], bool]:
    return lambda data: data.get("type") == kind


def types(objects: list[dict[str, Any]]) -> list[str]:
    return [str(o["type"]) for o in objects]


class EventStream:
    """``GET /api/sessions/{id}/events`` read as Server-Sent Events: ``next()`` is the next
    ``(event, data)``; comments (``: ping``) are collected in ``comments``."""

    def __init__(self, lines: Iterator[str]) -> None:
        self.lines = lines
        self.comments: list[str] = []

    def next(self) -> tuple[str, dict[str, Any]]:
        kind, data = "", ""
        for line in self.lines:
            if line.startswith(":"):
                self.comments.append(line[1:].strip())
            elif line.startswith("event: "):
                kind = line.removeprefix("event: ")
            elif line.startswith("data: "):
                data = line.removeprefix("data: ")
            elif not line and kind:
                return kind, json.loads(data)
        raise AssertionError("the event stream ended")

    def comment(self) -> str:
        """The next comment line (the first is ``subscribed``)."""
        count = len(self.comments)
        for line in self.lines:
            if line.startswith(":"):
                self.comments.append(line[1:].strip())
            if len(self.comments) > count:
                return self.comments[-1]
        raise AssertionError("the event stream ended")


@contextmanager
def event_stream(gateway: Gateway, session_id: str) -> Iterator[EventStream]:
    """Subscribed once this yields (the stream's first comment has arrived)."""
    timeout = httpx.Timeout(WAIT_S, read=WAIT_S)
    with gateway.client.stream(
        "GET", f"/api/sessions/{session_id}/events", timeout=timeout
    ) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        stream = EventStream(response.iter_lines())
        assert stream.comment() == "subscribed"
        yield stream


def token_update(session_id: str, used: int = 1_000) -> TokenUpdate:
    return TokenUpdate(
        session_id=session_id,
        context=ContextUsage(
            used_tokens=used, max_tokens=8_000, percent=12.5, threshold_percent=70
        ),
    )


def publish(gateway: Gateway, event: AnyEvent) -> None:
    """As a worker publishes: the stream, then the channel."""
    producers = gateway.resources.producers
    EventPublisher(producers.redis, prefix=producers.settings.channel_prefix).publish(event)


def chat_channel(
    gateway: Gateway, fake: FakeLLM, *, provider: str = "openai-compatible", model: str = "chat-1"
) -> ChannelConfig:
    """A channel for conversation (not auxiliary) answered by the fake LLM. The first one is
    the system's chat channel too, as ``COMPACTION_CHAT_CHANNEL`` would name it: it answers
    the sessions whose agent chose none and whose model no channel serves."""
    channel = gateway.store.add_channel(
        f"chat-{provider}",
        provider=provider,
        model=model,
        base_url=fake.url_for(provider),
        api_key="sk-test-chat-0123456789abcdef",
    )
    models = gateway.resources.turns.models
    models.system = models.system or channel.name
    return channel
