"""Structured logs (docs/architecture.md, "Logs and metrics"): the fields of every log call
arrive, and ``service.logs.configure`` writes one JSON object per line on stderr for structlog's
records and the standard library's alike."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from datetime import datetime, timedelta

import fakeredis
import pytest
import structlog
from structlog.testing import capture_logs

from compaction.contract import CompactionSkipped
from service import logs
from service.events import EventPublisher
from service.keys import lock_key
from worker.lock import SessionLock


@pytest.fixture
def restore_logging() -> Iterator[None]:
    """structlog's defaults and the root logger as they were before the test configured them."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    structlog.reset_defaults()
    root.handlers[:] = handlers
    root.setLevel(level)


def json_lines(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines()]


def test_lock_lost_keeps_its_fields() -> None:
    client = fakeredis.FakeRedis()
    lock = SessionLock(client, "s-1", ttl_s=5, owner="r-1")
    assert lock.acquire()
    client.set(lock_key("compaction", "s-1"), "another-holder")

    with capture_logs() as captured:
        assert not lock.renew()

    assert captured == [
        {
            "event": "lock lost",
            "log_level": "warning",
            "key": "compaction:lock:s-1",
            "error": captured[0]["error"],
        }
    ]
    assert "lock" in captured[0]["error"].lower()
    assert lock.lost.is_set()


def test_event_not_published_keeps_its_fields() -> None:
    server = fakeredis.FakeServer()
    server.connected = False  # every command fails as when Redis is down
    publisher = EventPublisher(fakeredis.FakeRedis(server=server))
    event = CompactionSkipped(session_id="s-1", code="lock_held", detail="busy")

    with capture_logs() as captured:
        assert publisher.publish(event) is False

    [entry] = captured
    assert (entry["event"], entry["log_level"]) == ("event not published", "error")
    assert json.loads(entry["event_json"])["sessionId"] == "s-1"
    assert entry["error"]


@pytest.mark.usefixtures("restore_logging")
def test_configured_output_is_one_json_object_per_line(capsys: pytest.CaptureFixture[str]) -> None:
    logs.configure("INFO")  # here: its handler writes to the sys.stderr that capsys captures
    structlog.get_logger("compaction.job").info("compaction job", session="s-1", seconds=0.25)
    # RQ and the SDKs log through the standard library, with %-arguments and extras
    logging.getLogger("rq.worker").info("%s: job %s", "default", "j-1", extra={"queue": "q"})
    logging.getLogger("rq.worker").debug("below the level")
    structlog.get_logger("compaction.job").debug("below the level too")
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        structlog.get_logger("compaction.job").exception("compaction job crashed", session="s-2")

    captured = capsys.readouterr()
    assert captured.out == ""
    first, second, third = json_lines(captured.err)
    assert list(first)[:4] == ["ts", "level", "logger", "msg"]
    assert {k: v for k, v in first.items() if k != "ts"} == {
        "level": "info",
        "logger": "compaction.job",
        "msg": "compaction job",
        "session": "s-1",
        "seconds": 0.25,
    }
    stamped = datetime.fromisoformat(str(first["ts"]))
    assert stamped.utcoffset() == timedelta(0)
    assert {k: v for k, v in second.items() if k != "ts"} == {
        "level": "info",
        "logger": "rq.worker",
        "msg": "default: job j-1",
        "queue": "q",
    }
    assert (third["level"], third["session"]) == ("error", "s-2")
    assert str(third["exception"]).endswith("RuntimeError: boom")
