"""Structured logs (docs/architecture.md, "Logs and metrics"): the fields of every log call
arrive as the standard library's record's attributes, and ``service.logs.configure`` writes one
JSON object per line on stderr for our records and the libraries' alike."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from datetime import datetime, timedelta

import fakeredis
import pytest

from compaction.core.contract import CompactionSkipped
from compaction.service import logs
from compaction.service.events import EventPublisher
from compaction.service.keys import lock_key
from compaction.worker.lock import SessionLock


@pytest.fixture
def restore_logging() -> Iterator[None]:
    """The root logger as it was before the test configured it."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def records(caplog: pytest.LogCaptureFixture, message: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.getMessage() == message]


def json_lines(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines()]


def test_lock_lost_keeps_its_fields(caplog: pytest.LogCaptureFixture) -> None:
    client = fakeredis.FakeRedis()
    lock = SessionLock(client, "s-1", ttl_s=5, owner="r-1")
    assert lock.acquire()
    client.set(lock_key("compaction", "s-1"), "another-holder")

    with caplog.at_level(logging.INFO):
        assert not lock.renew()

    [record] = records(caplog, "lock lost")
    assert (record.name, record.levelname) == ("compaction.worker.lock", "WARNING")
    assert record.key == "compaction:lock:s-1"  # type: ignore[attr-defined]
    assert "lock" in record.error.lower()  # type: ignore[attr-defined]
    assert lock.lost.is_set()


def test_event_not_published_keeps_its_fields(caplog: pytest.LogCaptureFixture) -> None:
    server = fakeredis.FakeServer()
    server.connected = False  # every command fails as when Redis is down
    publisher = EventPublisher(fakeredis.FakeRedis(server=server))
    event = CompactionSkipped(session_id="s-1", code="lock_held", detail="busy")

    with caplog.at_level(logging.INFO):
        assert publisher.publish(event) is False

    [record] = records(caplog, "event not published")
    assert record.levelname == "ERROR"
    assert json.loads(record.event_json)["sessionId"] == "s-1"  # type: ignore[attr-defined]
    assert record.error  # type: ignore[attr-defined]


def test_a_field_named_like_a_record_attribute_is_kept_apart(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.INFO):
        logs.get_logger("compaction.test").info("named", name="agent-7", module="m")

    [record] = records(caplog, "named")
    assert record.name == "compaction.test"
    assert (record.field_name, record.field_module) == ("agent-7", "m")  # type: ignore[attr-defined]


def test_unconfigured_logs_never_reach_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    """A gateway that embeds the producers and configures no logging: Python's own last-resort
    handler (stderr, warnings and up) is all that prints."""
    root = logging.getLogger()
    handlers = root.handlers[:]
    root.handlers[:] = []
    try:
        logs.get_logger("compaction.service.events").warning(
            "event relay reconnecting", error="gone"
        )
    finally:
        root.handlers[:] = handlers
    assert capsys.readouterr().out == ""


@pytest.mark.usefixtures("restore_logging")
def test_configured_output_is_one_json_object_per_line(capsys: pytest.CaptureFixture[str]) -> None:
    logs.configure("INFO")  # here: its handler writes to the sys.stderr that capsys captures
    logs.get_logger("compaction.job").info("compaction job", session="s-1", seconds=0.25)
    # RQ and the SDKs log through the standard library, with %-arguments and extras
    logging.getLogger("rq.worker").info("%s: job %s", "default", "j-1", extra={"queue": "q"})
    logging.getLogger("rq.worker").debug("below the level")
    logs.get_logger("compaction.job").debug("below the level too")
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        logs.get_logger("compaction.job").exception("compaction job crashed", session="s-2")

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
