"""``compaction compact --review`` and ``compaction draft show|edit|apply|discard``
(cli/drafts.py; docs/architecture.md, "Review"): the request is queued with ``review``, the
worker's draft is shown, edited from a file, applied (the edited text is the summary) and undone
with ``restore``; a closed draft's refusal is one line with its code. SQLite and PostgreSQL, real
Redis, the SDK against the loopback fake; the commands through ``cli.main``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from compaction.core.contract import CompactionDraft, CompactionRequested
from compaction.service.queue import compaction_queue
from compaction.worker.jobs import run
from tests.fakes import conversation
from tests.integration.worker_helpers import Harness

Command = Callable[..., tuple[int, str, str]]
EDITED = "Edited: the agent inspected /srv/0 to /srv/29, one Python file in each."


def test_review_show_edit_apply_restore(
    h: Harness, command: Command, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name, value in h.namespace.env().items():
        monkeypatch.setenv(name, value)
    h.channel("openai")
    session_id = h.session(conversation(30))
    original = h.store.load_history(session_id)

    status, out, err = command("compact", session_id, "--review", "--focus", "paths", "--json")
    assert status == 0, err
    [job] = compaction_queue(h.redis, h.namespace.queue).jobs
    request = CompactionRequested.model_validate(job.args[0])
    assert request.review and request.request_id == json.loads(out)["requestId"]
    drafted = run(h.runtime(), request)
    assert isinstance(drafted, CompactionDraft), drafted
    draft_id = str(drafted.draft_id)

    status, out, err = command("draft", "show", draft_id, "--json")
    assert status == 0, err
    shown = json.loads(out)
    assert shown["status"] == "ready" and shown["focus"] == "paths" and shown["summary"]
    status, out, _ = command("draft", "show", draft_id)
    assert out.startswith(f"draft {draft_id} of session {session_id}: ready")
    assert shown["summary"] in out

    text = tmp_path / "summary.md"
    text.write_text(EDITED, encoding="utf-8")
    status, out, err = command("draft", "edit", draft_id, "--file", str(text), "--json")
    assert status == 0, err
    assert json.loads(out)["edited"] and json.loads(out)["summary"] == EDITED

    status, out, err = command("draft", "apply", draft_id, "--json")
    assert status == 0, err
    applied = json.loads(out)
    assert applied["draft"]["status"] == "applied"
    summaries = [s for s in h.store.load_history(session_id) if s.is_compaction_summary]
    assert [s.message.content for s in summaries] == [EDITED]

    status, _out, err = command("draft", "discard", draft_id)
    assert status == 1
    assert err.startswith(f"compaction: error [draft_closed]: draft {draft_id} is applied")
    assert command("restore", str(applied["runId"]))[0] == 0
    assert h.store.load_history(session_id) == original


def test_an_unknown_draft_and_a_missing_file(command: Command, tmp_path: Path) -> None:
    status, _out, err = command("draft", "show", "424242")
    assert (status, err) == (1, "compaction: error [invalid_request]: draft 424242 not found\n")
    status, _out, err = command("draft", "edit", "1", "--file", str(tmp_path / "none.md"))
    assert status == 1 and err.startswith("compaction: error [io_error]:")
