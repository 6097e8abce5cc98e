"""A session's live objects over the gateway's WebSocket and SSE (gateway/routes/realtime.py,
gateway/hub.py): the events of that session only, in the wire format; /compact from the socket
with the worker's events after it; errors as objects; the SSE framing and heartbeat."""

from __future__ import annotations

import time

import httpx
import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus

from compaction.core.contract import CompactionDone, CompactionStart, parse_event
from compaction.gateway.routes import realtime
from compaction.service.queue import compaction_queue
from tests.fakes import conversation
from tests.gateway.conftest import Gateway
from tests.gateway.realtime_helpers import (
    WAIT_S,
    event_stream,
    of_type,
    publish,
    socket,
    token_update,
    types,
)
from tests.llm_server import FakeLLM


def test_a_socket_gets_its_sessions_events_in_the_wire_format(gateway: Gateway) -> None:
    mine = gateway.store.create_session("mine")
    other = gateway.store.create_session("other")
    event = token_update(mine, used=222)
    with socket(gateway, mine) as ws:
        publish(gateway, token_update(other, used=111))
        publish(gateway, event)
        got = ws.receive()
    assert got == event.to_wire()
    assert parse_event(got).session_id == "mine"  # and not the other session's, sent first


def test_compact_from_the_socket_then_the_workers_events(
    gateway: Gateway, fake_llm: FakeLLM
) -> None:
    gateway.auxiliary(fake_llm)
    session_id = gateway.store.create_session("long", messages=conversation(20))
    with socket(gateway, session_id) as ws, socket(gateway, session_id) as watcher:
        # the seed's own client message (§6) names the session
        ws.send({"type": "compact", "sessionId": session_id, "focus": "the directories"})
        _wait_for_queued(gateway)
        gateway.drain()
        seen = ws.until(of_type("token_update"))
        watched = watcher.until(of_type("token_update"))
    assert types(seen) == ["compaction_start", "compaction_done", "token_update"]
    assert watched == seen  # every socket of the session sees them
    done = seen[1]
    assert done["sessionId"] == session_id and done["removedCount"] > 0
    assert "the directories" in fake_llm.bodies_text()  # the focus reached the summarizer


def _wait_for_queued(gateway: Gateway) -> None:
    """The socket's /compact is handled after the send returns: wait until its job is queued."""
    producers = gateway.resources.producers
    queue = compaction_queue(producers.redis, producers.settings.queue_name)
    deadline = time.monotonic() + WAIT_S
    while not queue.count:
        assert time.monotonic() < deadline, "no compaction job was queued"
        time.sleep(0.05)


@pytest.mark.parametrize(
    ("sent", "message"),
    [
        ("not json", "socket message"),
        ('["compact"]', "socket message"),
        ('{"type": "dance"}', "socket message"),
        ('{"type": "message", "content": ""}', "content"),
        ('{"type": "compact", "focus": 3}', "focus"),
        ('{"type": "compact", "sessionId": "another"}', "sessionId: not this socket's session"),
    ],
)
def test_a_bad_request_is_an_error_object_and_the_socket_stays(
    gateway: Gateway, sent: str, message: str
) -> None:
    session_id = gateway.store.create_session()
    with socket(gateway, session_id) as ws:
        ws.connection.send(sent)
        got = ws.receive()
        publish(gateway, token_update(session_id))
        after = ws.receive()
    assert got["type"] == "error" and got["error"]["code"] == "invalid_request"
    assert message in got["error"]["message"]
    assert after["type"] == "token_update"


def test_a_socket_on_an_unknown_session_gets_an_error_and_is_closed(gateway: Gateway) -> None:
    with socket(gateway, "nobody") as ws:
        got = ws.receive()
        with pytest.raises(ConnectionClosed) as closed:
            ws.receive()
    assert got["error"]["code"] == "session_not_found"
    assert closed.value.rcvd is not None and closed.value.rcvd.code == realtime.NO_SESSION


def test_a_socket_needs_the_token(gateway: Gateway) -> None:
    session_id = gateway.store.create_session()
    with (
        pytest.raises((InvalidStatus, ConnectionClosed)),
        socket(gateway, session_id, token="x") as ws,
    ):
        ws.receive()


def test_sse_carries_the_same_objects_with_their_type(gateway: Gateway) -> None:
    session_id = gateway.store.create_session()
    event = token_update(session_id, used=333)
    with event_stream(gateway, session_id) as stream:
        publish(gateway, token_update("someone-else"))
        publish(gateway, event)
        kind, data = stream.next()
    assert kind == "token_update"
    assert data == event.to_wire()


def test_sse_sends_heartbeats_while_idle(gateway: Gateway, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(realtime, "HEARTBEAT_S", 0.2)
    session_id = gateway.store.create_session()
    with event_stream(gateway, session_id) as stream:
        assert stream.comment() == "ping"
        assert stream.comment() == "ping"


def test_sse_on_an_unknown_session_is_404(gateway: Gateway) -> None:
    response = gateway.client.get("/api/sessions/nobody/events")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "session_not_found"


def test_sse_takes_the_token_as_a_query_parameter_as_a_browser_must(gateway: Gateway) -> None:
    """``EventSource`` cannot set headers: ``?token=`` opens the stream, a wrong one is 401, and
    the query parameter opens nothing else."""
    session_id = gateway.store.create_session()
    path = f"{gateway.url}/api/sessions/{session_id}/events"
    with httpx.Client(timeout=10) as bare:
        with bare.stream("GET", path, params={"token": gateway.token}) as ok:
            assert ok.status_code == 200
            assert ok.headers["content-type"].startswith("text/event-stream")
        assert bare.get(path, params={"token": "wrong"}).status_code == 401
        listing = bare.get(f"{gateway.url}/api/sessions", params={"token": gateway.token})
        assert listing.status_code == 401


def test_sse_also_names_a_staged_compaction_as_the_seed_does(gateway: Gateway) -> None:
    """A start and done with a stage come twice: as themselves, then as
    ``context_compact_start``/``done`` (realtime.seed_event); one without a stage comes once."""
    session_id = gateway.store.create_session()
    start = CompactionStart(session_id=session_id, request_id="r1", stage="history")
    done = CompactionDone(
        session_id=session_id,
        request_id="r1",
        stage="loop",
        removed_count=4,
        tokens_before=9_000,
        tokens_after=2_000,
    )
    bare = CompactionStart(session_id=session_id)
    with event_stream(gateway, session_id) as stream:
        for event in (start, done, bare):
            publish(gateway, event)
        got = [stream.next() for _ in range(5)]
    ids = {"sessionId": session_id, "requestId": "r1"}
    assert got == [
        ("compaction_start", start.to_wire()),
        (
            "context_compact_start",
            {"type": "context_compact_start", **ids, "stage": "compact_msg1"},
        ),
        ("compaction_done", done.to_wire()),
        (
            "context_compact_done",
            {"type": "context_compact_done", **ids, "stage": "compact_msg2"}
            | {"tokensBefore": 9_000, "tokensAfter": 2_000},
        ),
        ("compaction_start", bare.to_wire()),  # no stage: no twin
    ]
