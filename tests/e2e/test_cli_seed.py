"""The seed's integration case (§11) through the command line at default settings (issue 12,
"Must show"): a 40-message conversation, ``/compact``, one summary, the compacted view
shorter, both views right, ``restore`` gives back the original. Real PostgreSQL and Redis, a
worker process, the fake LLM server; no ``COMPACTION_CONTEXT_WINDOW``: the 200k default, whose
28k tail budget covers the whole conversation.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_cli import (
    Cli,
    add_auxiliary_channel,
    environment,
    history,
)
from tests.fakes import TRANSCRIPTS
from tests.llm_server import FakeLLM

#: A customer-service conversation: its first 40 messages end on a tool result, no call open.
SEED_TRANSCRIPT = TRANSCRIPTS / "taubench_airline_idx52.json"


@pytest.fixture(scope="module")
def settings() -> Iterator[dict[str, str]]:
    with environment() as values:  # the defaults: no window, threshold or head set
        yield values


def forty_messages(folder: Path) -> Path:
    path = folder / "forty.json"
    messages = json.loads(SEED_TRANSCRIPT.read_text(encoding="utf-8"))[:40]
    assert messages[-1]["role"] == "tool"  # the last call has its result
    path.write_text(json.dumps(messages), encoding="utf-8")
    return path


def message_fields(row: dict[str, Any]) -> tuple[Any, ...]:
    return row["id"], row["role"], row["content"], row["tool_calls"], row["tool_call_id"]


def test_forty_messages_compact_at_default_settings_and_restore(
    cli: Cli, fake_llm: FakeLLM, worker: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    add_auxiliary_channel(cli, fake_llm)
    session = cli("import", str(forty_messages(tmp_path))).stdout.strip()
    before = history(cli, session, "compacted")
    assert len(before) == 40
    stats = json.loads(cli("stats", session, "--json").stdout)
    assert stats["maxTokens"] == 200_000 and stats["usedTokens"] < 28_000  # all in the tail budget

    done = json.loads(cli("compact", session, "--wait", "--timeout", "60").stdout)  # exit 0
    assert done["type"] == "compaction_done" and done["sessionId"] == session
    assert done["tokensAfter"] < done["tokensBefore"] and len(fake_llm.requests) == 1

    # The compacted view: the head, the one summary, the tail; shorter.
    after = history(cli, session, "compacted")
    summaries = [i for i, r in enumerate(after) if r["is_compaction_summary"]]
    assert [after[i]["id"] for i in summaries] == [done["summaryMessageId"]]
    assert len(after) == 40 - done["removedCount"] + 1 < 40
    at = summaries[0]
    assert after[at]["content"].startswith("[CONTEXT COMPACTION]")
    assert after[:at] == before[:at]
    assert after[at + 1 :] == before[len(before) - len(after) + at + 1 :]
    kept = {r["id"] for r in after}

    # The full view: all 40 originals, the middle marked as compacted into the summary.
    full = history(cli, session, "full")
    rows = {r["id"]: r for r in full}
    assert [message_fields(rows[r["id"]]) for r in before] == [message_fields(r) for r in before]
    compacted = [rows[r["id"]] for r in before if r["id"] not in kept]
    assert len(compacted) == done["removedCount"] >= 2
    assert all(
        r["compacted_at"] and r["compacted_into_id"] == done["summaryMessageId"] for r in compacted
    )
    assert rows[done["summaryMessageId"]]["compacted_at"] is None
    others = [r for r in full if r["id"] not in {*(r["id"] for r in before), *kept}]
    assert all(r["role"] == "system" for r in others)  # the run's event bubble, if any

    # Undo it: the compacted view is the original one again, ids and contents.
    run = json.loads(cli("stats", session, "--json").stdout)["lastRun"]
    assert run["id"] == done["runId"] and run["status"] == "succeeded"
    cli("restore", str(done["runId"]))
    assert history(cli, session, "compacted") == before
    assert worker.poll() is None
