"""End to end through the command line (issue "5 of 5"): real PostgreSQL and Redis, a worker
process, the fake LLM server; import, compact --wait, both history views, a second (iterative)
compaction, restore, export, the failures.

The commands run in this process through ``cli.main`` with the settings in the environment, as
the console script would (it reads them at each call): seconds faster than a process each. One
smoke test runs the installed ``compaction`` script itself. A module with other settings builds
its fixtures from ``environment``, ``worker_process`` and ``in_process`` (test_cli_seed.py).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

import pytest

from compaction import cli as cli_package
from compaction.store.migrate import upgrade
from tests.fakes import TRANSCRIPTS
from tests.llm_server import FakeLLM, Reply
from tests.processes import COMPACTION, child_env, start, stop
from tests.services import create_database, drop_database, fresh_namespace

Result = subprocess.CompletedProcess[str]


class Cli(Protocol):
    def __call__(self, *args: str, ok: bool = True) -> Result: ...


@contextmanager
def environment(**overrides: str) -> Iterator[dict[str, str]]:
    """The commands' and the worker's settings, as ``COMPACTION_`` variables: a migrated
    database and a Redis namespace of their own, the module's ``overrides`` on top."""
    name, url = create_database()
    try:
        upgrade(url)
        with fresh_namespace() as names:
            yield {
                **names.env(),
                "COMPACTION_DATABASE_URL": url,
                "COMPACTION_LLM_TIMEOUT_S": "10",
                "COMPACTION_LLM_MAX_RETRIES": "1",
                "COMPACTION_JOB_TIMEOUT_S": "60",
                **overrides,
            }
    finally:
        drop_database(name)


@contextmanager
def worker_process(settings: dict[str, str], folder: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``compaction worker`` with ``settings``, its log in ``folder``."""
    process = start(
        [str(COMPACTION), "worker", "--log-level", "WARNING"],
        child_env(**settings),
        folder / "worker.log",
    )
    try:
        yield process
    finally:
        stop(process, timeout=20)


def in_process(
    settings: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> Cli:
    """``cli("import", path)``: ``compaction import PATH`` run by ``cli.main`` in this process,
    with ``settings`` and none of the caller's (no ``COMPACTION_`` variable, no ``.env``); its
    exit status and what it printed."""
    for name in [n for n in os.environ if n.startswith("COMPACTION_")]:
        monkeypatch.delenv(name)
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)

    def run(*args: str, ok: bool = True) -> Result:
        status = cli_package.main(list(args))
        out, err = capsys.readouterr()
        if ok:
            assert status == 0, f"compaction {' '.join(args)}: {err}"
        return subprocess.CompletedProcess(list(args), status, out, err)

    return run


@pytest.fixture(scope="module")
def settings() -> Iterator[dict[str, str]]:
    with environment(COMPACTION_CONTEXT_WINDOW="16000") as values:
        yield values


def history(cli: Cli, session: str, view: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(
        cli("history", session, "--view", view, "--json").stdout
    )
    return rows


def test_the_installed_console_script(settings: dict[str, str], cli: Cli, tmp_path: Path) -> None:
    """The one process of the command line: ``compaction import``, its settings from the
    environment; what it stored is what the in-process commands read."""
    transcript = tmp_path / "two.json"
    transcript.write_text(json.dumps([{"role": "user", "content": "hi"}] * 2))
    done = subprocess.run(
        [str(COMPACTION), "import", str(transcript)],
        env=child_env(**settings),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    rows = history(cli, done.stdout.strip(), "full")
    assert [(r["role"], r["content"]) for r in rows] == [("user", "hi")] * 2


def add_auxiliary_channel(cli: Cli, fake_llm: FakeLLM) -> None:
    cli(
        "channel",
        "add",
        "aux",
        "--provider",
        "openai",
        "--model",
        "gpt-4o-mini",
        "--base-url",
        f"{fake_llm.base_url}/v1",
        "--api-key",
        "sk-e2e-0123456789abcdef",
        "--auxiliary",
        "--default",
    )


def assert_first_compaction(cli: Cli, session: str, first: dict[str, Any]) -> None:
    """Both views after one compaction of the 166-message transcript: one request and its
    tool loop, so the loop stage's execution summary."""
    assert first["type"] == "compaction_done" and first["sessionId"] == session
    compacted = history(cli, session, "compacted")
    full = history(cli, session, "full")
    assert len(compacted) == 166 - first["removedCount"] + 1
    summary = [r for r in compacted if r["is_compaction_summary"]]
    assert [r["id"] for r in summary] == [first["summaryMessageId"]]
    assert summary[0]["content"].startswith("[LOOP COMPACTION]")
    marked = [r for r in full if r["compacted_into_id"] == first["summaryMessageId"]]
    assert len(marked) == first["removedCount"] and all(r["compacted_at"] for r in marked)
    assert len([r for r in full if r["role"] != "system" or r["seq"] == 1]) >= 166
    # The summary sits right after the rows it replaced, in the full view.
    position = [r["id"] for r in full].index(first["summaryMessageId"])
    assert full[position - 1]["id"] == marked[-1]["id"]


def test_import_compact_views_iterate_restore(
    cli: Cli, fake_llm: FakeLLM, worker: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    add_auxiliary_channel(cli, fake_llm)
    transcript = TRANSCRIPTS / "msa_deepseek-chat_pydicom-1139.json"
    session = cli("import", str(transcript)).stdout.strip()
    assert len(history(cli, session, "compacted")) == 166

    first = json.loads(cli("compact", session, "--wait", "--timeout", "60").stdout)
    assert_first_compaction(cli, session, first)

    # More conversation, then a second compaction: the new request puts the first (loop)
    # summary in the history, whose summary reads it as a turn and replaces it.
    later = tmp_path / "later.json"
    more = json.loads((TRANSCRIPTS / "openhands_ponyc-4588.json").read_text())[1:]
    later.write_text(json.dumps(more))
    assert cli("import", str(later), "--session", session).stdout.strip() == session
    before_second = history(cli, session, "compacted")
    fake_llm.requests.clear()
    second = json.loads(cli("compact", session, "--wait").stdout)
    assert second["type"] == "compaction_done"
    assert "[LOOP COMPACTION]" in fake_llm.bodies_text()
    full = history(cli, session, "full")
    old = next(r for r in full if r["id"] == first["summaryMessageId"])
    assert old["compacted_into_id"] == second["summaryMessageId"]
    assert sum(r["is_compaction_summary"] for r in history(cli, session, "compacted")) == 1

    # Undo the second run: the compacted view is what it was before it.
    stats = json.loads(cli("stats", session, "--json").stdout)
    assert stats["compactions"] == 2 and stats["lastRun"]["status"] == "succeeded"
    cli("restore", str(stats["lastRun"]["id"]))
    assert history(cli, session, "compacted") == before_second

    exported = json.loads(cli("export", session, "--view", "full").stdout)
    assert len(exported) == len(history(cli, session, "full"))
    assert worker.poll() is None  # the worker is still up


def test_compact_wait_exits_one_on_failure(
    cli: Cli, fake_llm: FakeLLM, worker: subprocess.Popen[bytes]
) -> None:
    session = cli("import", str(TRANSCRIPTS / "taubench_airline_idx52.json")).stdout.strip()
    fake_llm.script(Reply(status=500))
    try:
        done = cli("compact", session, "--wait", "--context-window", "4000", ok=False)
    finally:
        fake_llm.script(Reply())
    assert done.returncode == 1
    event = json.loads(done.stdout)
    assert event["type"] == "compaction_failed" and event["code"] == "llm_error"
    # and the one error line, as every failed command prints it
    assert done.stderr.splitlines()[-1] == f"compaction: error [llm_error]: {event['error']}"


def test_malformed_imports_store_nothing(cli: Cli, tmp_path: Path) -> None:
    cases = {
        "broken.json": "[{",
        "object.json": "{}",
        "role.json": json.dumps([{"role": "robot", "content": "hi"}]),
        "orphan.json": json.dumps(
            [
                {"role": "user", "content": "hi"},
                {"role": "tool", "content": "x", "tool_call_id": "c9"},
            ]
        ),
    }
    before = cli("stats", "--json", "nope", ok=False)
    assert before.returncode == 1
    for name, text in cases.items():
        path = tmp_path / name
        path.write_text(text)
        done = cli("import", str(path), "--session", f"s-{name}", ok=False)
        assert done.returncode == 1 and done.stdout == ""
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        missing = cli("history", f"s-{name}", "--view", "full", ok=False)
        assert "session_not_found" in missing.stderr  # nothing stored, not even the session
