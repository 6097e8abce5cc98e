"""End to end through the command line only (issue "5 of 5"): real PostgreSQL and Redis, a
worker subprocess, the fake LLM server; import, compact --wait, both history views, a second
(iterative) compaction, restore."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from store.migrate import upgrade
from tests.fakes import TRANSCRIPTS
from tests.llm_server import FakeLLM
from tests.services import create_database, drop_database, fresh_namespace

COMPACTION = str(Path(sys.executable).parent / "compaction")


@pytest.fixture(scope="module")
def env() -> Iterator[dict[str, str]]:
    name, url = create_database()
    upgrade(url)
    with fresh_namespace() as names:
        yield {
            **os.environ,
            **names.env(),
            "COMPACTION_DATABASE_URL": url,
            "COMPACTION_CONTEXT_WINDOW": "16000",
            "COMPACTION_LLM_TIMEOUT_S": "10",
            "COMPACTION_LLM_MAX_RETRIES": "1",
            "COMPACTION_JOB_TIMEOUT_S": "60",
        }
    drop_database(name)


@pytest.fixture(scope="module")
def worker(env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    process = subprocess.Popen(
        [COMPACTION, "worker", "--log-level", "WARNING"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    yield process
    os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=20)


def cli(env: dict[str, str], *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([COMPACTION, *args], env=env, capture_output=True, text=True, timeout=120)
    if ok:
        assert done.returncode == 0, f"compaction {' '.join(args)}: {done.stderr}"
    return done


def history(env: dict[str, str], session: str, view: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(
        cli(env, "history", session, "--view", view, "--json").stdout
    )
    return rows


def test_import_compact_views_iterate_restore(
    env: dict[str, str], fake_llm: FakeLLM, worker: subprocess.Popen[str], tmp_path: Path
) -> None:
    cli(
        env,
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
    transcript = TRANSCRIPTS / "msa_deepseek-chat_pydicom-1139.json"
    session = cli(env, "import", str(transcript)).stdout.strip()
    original = history(env, session, "compacted")
    assert len(original) == 166

    first = json.loads(cli(env, "compact", session, "--wait", "--timeout", "60").stdout)
    assert first["type"] == "compaction_done" and first["sessionId"] == session
    compacted = history(env, session, "compacted")
    full = history(env, session, "full")
    assert len(compacted) == 166 - first["removedCount"] + 1
    summary = [r for r in compacted if r["is_compaction_summary"]]
    assert [r["id"] for r in summary] == [first["summaryMessageId"]]
    assert summary[0]["content"].startswith("[CONTEXT COMPACTION]")
    marked = [r for r in full if r["compacted_into_id"] == first["summaryMessageId"]]
    assert len(marked) == first["removedCount"] and all(r["compacted_at"] for r in marked)
    assert len([r for r in full if r["role"] != "system" or r["seq"] == 1]) >= 166
    # The summary sits right after the rows it replaced, in the full view.
    position = [r["id"] for r in full].index(first["summaryMessageId"])
    assert full[position - 1]["id"] == marked[-1]["id"]

    # More conversation, then a second compaction: iterative, the first summary folded in.
    later = tmp_path / "later.json"
    more = json.loads((TRANSCRIPTS / "openhands_ponyc-4588.json").read_text())[1:]
    later.write_text(json.dumps(more))
    assert cli(env, "import", str(later), "--session", session).stdout.strip() == session
    before_second = history(env, session, "compacted")
    fake_llm.requests.clear()
    second = json.loads(cli(env, "compact", session, "--wait").stdout)
    assert second["type"] == "compaction_done"
    assert "Previous summary" in fake_llm.bodies_text()  # the update template
    full = history(env, session, "full")
    old = next(r for r in full if r["id"] == first["summaryMessageId"])
    assert old["compacted_into_id"] == second["summaryMessageId"]
    assert sum(r["is_compaction_summary"] for r in history(env, session, "compacted")) == 1

    # Undo the second run: the compacted view is what it was before it.
    stats = json.loads(cli(env, "stats", session, "--json").stdout)
    assert stats["compactions"] == 2 and stats["lastRun"]["status"] == "succeeded"
    cli(env, "restore", str(stats["lastRun"]["id"]))
    assert history(env, session, "compacted") == before_second

    exported = json.loads(cli(env, "export", session, "--view", "full").stdout)
    assert len(exported) == len(history(env, session, "full"))
    assert worker.poll() is None  # the worker is still up


def test_compact_wait_exits_one_on_failure(
    env: dict[str, str], fake_llm: FakeLLM, worker: subprocess.Popen[str]
) -> None:
    from tests.llm_server import Reply

    session = cli(env, "import", str(TRANSCRIPTS / "taubench_airline_idx52.json")).stdout.strip()
    fake_llm.script(Reply(status=500))
    try:
        done = cli(env, "compact", session, "--wait", "--context-window", "4000", ok=False)
    finally:
        fake_llm.script(Reply())
    assert done.returncode == 1
    event = json.loads(done.stdout)
    assert event["type"] == "compaction_failed" and event["code"] == "llm_error"


def test_malformed_imports_store_nothing(env: dict[str, str], tmp_path: Path) -> None:
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
    before = cli(env, "stats", "--json", "nope", ok=False)
    assert before.returncode == 1
    for name, text in cases.items():
        path = tmp_path / name
        path.write_text(text)
        done = cli(env, "import", str(path), "--session", f"s-{name}", ok=False)
        assert done.returncode == 1 and done.stdout == ""
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        missing = cli(env, "history", f"s-{name}", "--view", "full", ok=False)
        assert "session_not_found" in missing.stderr  # nothing stored, not even the session
