"""The per-turn decision line (the second seed's ``[COMPACT]`` log; service/logs.py,
``DECISIONS``): a default run (``--log-level WARNING``, every command's default but the
worker's) shows it, and nothing else at INFO; ERROR hides it."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest

from compaction.service import logs

OTHER = "compaction.producers.other"


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    root, decisions = logging.getLogger(), logging.getLogger(logs.DECISIONS)
    handlers, level, own = root.handlers[:], root.level, decisions.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    decisions.setLevel(own)


def logged(level: str, capfd: pytest.CaptureFixture[str]) -> list[str]:
    """The messages a run configured at ``level`` writes for one decision and one other INFO
    line."""
    logs.configure(level)
    logs.get_logger(logs.DECISIONS).info("compact decision", decision="below_threshold", total=7)
    logs.get_logger(OTHER).info("something ordinary")
    lines = [json.loads(line) for line in capfd.readouterr().err.splitlines()]
    return [f"{line['logger']}: {line['msg']}" for line in lines]


def test_a_default_run_shows_the_decision_line_and_nothing_else_at_info(
    capfd: pytest.CaptureFixture[str],
) -> None:
    assert logged("WARNING", capfd) == ["compaction.decision: compact decision"]


def test_info_shows_both_and_error_hides_the_decision(
    capfd: pytest.CaptureFixture[str],
) -> None:
    assert logged("INFO", capfd) == [
        "compaction.decision: compact decision",
        f"{OTHER}: something ordinary",
    ]
    assert logged("ERROR", capfd) == []


def test_the_decision_line_carries_its_fields(capfd: pytest.CaptureFixture[str]) -> None:
    logs.configure("WARNING")
    logs.get_logger(logs.DECISIONS).info("compact decision", decision="enqueued", total=9)
    (line,) = [json.loads(text) for text in capfd.readouterr().err.splitlines()]
    assert (line["level"], line["decision"], line["total"]) == ("info", "enqueued", 9)
