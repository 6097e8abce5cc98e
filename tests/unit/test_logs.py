"""Structured logs (docs/architecture.md, "Logs and metrics"): the fields of every log call
arrive as the standard library's record's attributes, and ``service.logs.configure`` writes one
JSON object per line on stderr for our records and the libraries' alike."""

from __future__ import annotations

import ast
import json
import logging
import os
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import fakeredis
import pytest
from rq.logutils import setup_loghandlers
from uvicorn import config as uvicorn_config

import compaction
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
    # An RQ worker ran first (the embedded stack's quiet one): it set its loggers' level
    setup_loghandlers("WARNING", name="rq.worker")
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


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        (
            '127.0.0.1:5 - "GET /api/sessions/s/events?token=SECRET HTTP/1.1" 200',
            '127.0.0.1:5 - "GET /api/sessions/s/events?token=*** HTTP/1.1" 200',
        ),
        ("/ws/sessions/s?a=1&Token=SECRET&b=2#end", "/ws/sessions/s?a=1&Token=***&b=2#end"),
        ("Authorization: Bearer SECRET", "Authorization: Bearer ***"),
        ("{'authorization': 'Bearer SECRET', 'x': 1}", "{'authorization': 'Bearer ***', 'x': 1}"),
        (
            '{"msg": "url?token=SECRET\\"", "a": "access_token=SECRET"}',
            '{"msg": "url?token=***\\"", "a": "access_token=***"}',
        ),
        # what only looks like one stays as it is
        ("a bearer token is required; max_tokens=5", "a bearer token is required; max_tokens=5"),
    ],
)
def test_mask_tokens(text: str, masked: str) -> None:
    assert logs.mask_tokens(text) == masked


class _Url:
    """A field that is no string: rendered by its ``repr``."""

    def __repr__(self) -> str:
        return "wss://gateway/ws/sessions/s?token=SECRET"


@pytest.mark.usefixtures("restore_logging")
def test_configured_output_masks_the_token_whoever_logs_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # uvicorn configured its loggers first, as under its default log_config: its own handler
    # and a WARNING level would print the token unmasked, or drop the line
    uvicorn_config.Config(app="unused:app", log_level="warning")
    logs.configure("INFO")
    access = '%s - "WebSocket %s" [accepted]'
    logging.getLogger("uvicorn.error").info(access, "127.0.0.1:5", "/ws/sessions/s?token=SECRET")
    logs.get_logger("compaction.gateway").info("connected", url=_Url(), header="Bearer SECRET")
    try:
        raise ValueError("bad URL: /api/sessions/s/events?token=SECRET")
    except ValueError:
        logging.getLogger("some.library").exception("failed")

    err = capsys.readouterr().err
    assert "SECRET" not in err
    uvicorn, ours, library = json_lines(err)
    assert uvicorn["msg"] == '127.0.0.1:5 - "WebSocket /ws/sessions/s?token=***" [accepted]'
    assert (ours["url"], ours["header"]) == ("wss://gateway/ws/sessions/s?token=***", "Bearer ***")
    assert str(library["exception"]).endswith(
        "ValueError: bad URL: /api/sessions/s/events?token=***"
    )


#: the package's folder; ``compaction/<layer>`` link to the repository's top-level folders
PACKAGE = Path(compaction.__file__).parent


def _source_files() -> list[Path]:
    """Every module of the package, each layer once."""
    return sorted(
        Path(folder, name)
        for folder, _subfolders, names in os.walk(PACKAGE, followlinks=True)
        for name in names
        if name.endswith(".py")
    )


def _bypasses(tree: ast.Module, in_cli: bool) -> list[str]:
    """What in ``tree`` logs around ``service.logs``: structlog used directly (unconfigured, it
    prints to stdout), a standard library logger made by hand, a ``print`` outside a command's
    output. A logger fetched only to take a filter (``worker/llm/deadline.py``) logs nothing."""
    filtered = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr == "addFilter"
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            found += [f"line {node.lineno}: imports structlog" for n in names if n == "structlog"]
        elif isinstance(node, ast.Call) and id(node) not in filtered:
            called = ast.unparse(node.func)
            if called == "logging.getLogger" or (called == "print" and not in_cli):
                found.append(f"line {node.lineno}: {called}()")
    return found


def test_every_log_call_goes_through_service_logs() -> None:
    """One door for logs (docs/architecture.md, "Logs and metrics"): only ``service/logs.py``
    makes loggers, so every record gets its JSON line and its masking."""
    bypasses = {
        relative: found
        for path in _source_files()
        if (relative := path.relative_to(PACKAGE).as_posix()) != "service/logs.py"
        if (found := _bypasses(ast.parse(path.read_text()), relative.startswith("cli/")))
    }
    assert len(_source_files()) > 100  # the layers' links were followed
    assert bypasses == {}
