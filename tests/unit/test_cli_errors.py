"""The command line's failures (docs/architecture.md, "Error codes"): each one prints exactly one
line on stderr, ``compaction: error [code]: message``, and exits 1. In-process through
``cli.main``; the database is a SQLite file of the test's own, and no service is reached (the
Redis and PostgreSQL addresses below refuse connections). The timeout's case waits on Redis:
``tests/integration/test_cli_timeout.py``."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog
from pydantic import BaseModel, Field, ValidationError

from compaction.cli import error_line, main
from compaction.cli.common import FIXES
from compaction.core.errors import NoAuxiliaryModel, NothingToCompact

#: nothing listens on port 1: the connection is refused at once
NO_REDIS = "redis://127.0.0.1:1/0"
NO_POSTGRES = "postgresql://127.0.0.1:1/compaction"
SECRET = "sk-live-0123456789abcdef"


@pytest.fixture(autouse=True)
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """No ``COMPACTION_*`` variable nor ``.env`` of the caller's; the embedded database under
    ``tmp_path``. The logging set up by ``main`` is undone afterwards."""
    for name in list(os.environ):
        if name.startswith("COMPACTION_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    root = logging.getLogger()
    handlers, level, config = root.handlers[:], root.level, structlog.get_config()
    yield tmp_path
    root.handlers[:] = handlers
    root.setLevel(level)
    structlog.configure(**config)


def fails(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The one line a failed command printed on stderr (nothing on stdout)."""
    assert main(list(argv)) == 1
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert "http" not in lines[0] and "Traceback" not in lines[0]
    return lines[0]


def transcript(folder: Path, text: str = '[{"role": "user", "content": "hi"}]') -> str:
    path = folder / "transcript.json"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_an_out_of_range_setting_is_one_line_naming_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMPACTION_THRESHOLD_PERCENT", "500")
    assert fails(capsys, "stats", "s1") == (
        "compaction: error [invalid_config]: invalid settings: threshold_percent: "
        "Input should be less than or equal to 95"
    )


@pytest.mark.parametrize(
    ("variable", "value", "field"),
    [
        ("COMPACTION_LLM_TEMPERATURE", SECRET, "llm_temperature"),  # a key in the wrong place
        ("COMPACTION_LLM_TIMEOUT_S", "100", "job_timeout_s"),  # contradicts another setting
        ("COMPACTION_MODEL_WINDOWS", "{gpt-4o: 128000", "model_windows"),  # not JSON
    ],
)
def test_bad_settings_are_named_and_not_echoed(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
    value: str,
    field: str,
) -> None:
    monkeypatch.setenv(variable, value)
    for command in (["agent", "show", "a1"], ["compact", "s1"]):
        line = fails(capsys, *command)
        assert line.startswith("compaction: error [invalid_config]: invalid settings: ")
        assert field in line and value not in line


def test_a_missing_file_is_an_io_error(capsys: pytest.CaptureFixture[str], env: Path) -> None:
    line = fails(capsys, "import", str(env / "nowhere.json"))
    assert line.startswith("compaction: error [io_error]: ") and "nowhere.json" in line


def test_a_broken_transcript_is_an_invalid_request(
    capsys: pytest.CaptureFixture[str], env: Path
) -> None:
    line = fails(capsys, "import", transcript(env, "[{"))
    assert line.startswith("compaction: error [invalid_request]: ") and "not valid JSON" in line


def test_refused_input_and_unknown_things(capsys: pytest.CaptureFixture[str], env: Path) -> None:
    assert fails(capsys, "agent", "show", "nobody") == (
        "compaction: error [invalid_request]: agent 'nobody' not found"
    )
    assert fails(capsys, "agent", "set", "a1", "--context-window", "20000000") == (
        "compaction: error [invalid_request]: context window 20000000 is out of range: "
        "1000 to 10000000"
    )
    assert fails(capsys, "stats", "nope") == (
        "compaction: error [session_not_found]: session 'nope' not found"
    )
    assert main(["import", transcript(env), "--session", "s1"]) == 0
    capsys.readouterr()
    assert fails(capsys, "compact", "s1", "--focus", "x" * 3_000) == (
        "compaction: error [invalid_request]: invalid compaction request: focus: "
        "String should have at most 2000 characters"
    )


def test_redis_down(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, env: Path
) -> None:
    assert main(["import", transcript(env), "--session", "s1"]) == 0
    capsys.readouterr()
    monkeypatch.setenv("COMPACTION_REDIS_URL", NO_REDIS)
    line = fails(capsys, "compact", "s1")
    assert line.startswith("compaction: error [redis]: ")
    assert line.endswith("(is Redis running at COMPACTION_REDIS_URL?)")


def test_database_down_shows_no_password(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMPACTION_DATABASE_URL", NO_POSTGRES.replace("//", f"//me:{SECRET}@"))
    line = fails(capsys, "migrate")
    assert line.startswith("compaction: error [db_error]: database error: ")
    assert SECRET not in line


def test_an_unwritable_folder_is_an_io_error(capsys: pytest.CaptureFixture[str], env: Path) -> None:
    blocker = env / "file"
    blocker.write_text("")
    line = fails(capsys, "schemas", "--out", str(blocker / "schemas"))
    assert line.startswith("compaction: error [io_error]: ")


def test_a_validation_error_that_reaches_the_command_line_is_one_line() -> None:
    class Focus(BaseModel):
        focus: str = Field(max_length=4)

    with pytest.raises(ValidationError) as info:
        Focus(focus=SECRET)
    assert error_line(info.value) == (
        "compaction: error [invalid_request]: focus: String should have at most 4 characters"
    )
    assert error_line(ValueError("two\nlines")) == "compaction: error [invalid_request]: two lines"


def test_a_failure_whose_fix_is_a_setting_names_the_command_that_fixes_it() -> None:
    """The service's message names no fix (the console points at its Settings for the same
    code); the command line adds its own command."""
    line = error_line(NoAuxiliaryModel("no auxiliary model: set one on the agent"))
    assert line == (
        "compaction: error [no_auxiliary_model]: no auxiliary model: set one on the agent "
        f"({FIXES['no_auxiliary_model']})"
    )
    assert "compaction channel add" in line and "--auxiliary" in line
    assert error_line(NothingToCompact("3 messages")) == (
        "compaction: error [nothing_to_compact]: 3 messages"
    )
