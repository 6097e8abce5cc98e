"""``compaction history`` and ``restore`` on runs the worker's job wrote (cli/sessions.py;
docs/architecture.md, "Tables"): the display view's bubbles (start, done, failed, restored) in
order and never in the model's view, ``--json`` rows with their metadata and ``pruned_at``, a run
that only pruned restored, then the summarizing run before it, the history back to the original.

Real store (SQLite and PostgreSQL), real Redis, the SDKs against the loopback fake; the commands
run through ``cli.main`` on the same database (``command``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from compaction.core.contract import CompactionDone, CompactionFailed
from compaction.core.pruning import PLACEHOLDER
from compaction.worker.jobs import run
from compaction.worker.runtime import Runtime
from tests.fakes import conversation
from tests.integration.worker_helpers import Harness, auto, manual
from tests.llm_server import Reply

Command = Callable[..., tuple[int, str, str]]
Row = dict[str, Any]


def history(command: Command, session_id: str, view: str) -> list[Row]:
    status, out, err = command("history", session_id, "--view", view, "--json")
    assert status == 0, err
    rows: list[Row] = json.loads(out)
    return rows


def stats(command: Command, session_id: str) -> Row:
    status, out, err = command("stats", session_id, "--json")
    assert status == 0, err
    figures: Row = json.loads(out)
    return figures


def is_event(row: Row) -> bool:
    return bool(row["metadata"]) and row["metadata"].get("systemType") == "compaction_event"


def conversation_of(rows: list[Row]) -> list[tuple[int, str, str]]:
    return [(r["id"], r["role"], r["content"]) for r in rows]


def fail_then_summarize(
    h: Harness, runtime: Runtime, session_id: str
) -> tuple[CompactionFailed, CompactionDone]:
    """A manual run the model fails (start and failed bubbles), then one that summarizes."""
    h.script(Reply(status=500))
    failed = run(runtime, manual(session_id))
    assert isinstance(failed, CompactionFailed) and failed.code == "llm_error"
    h.script(Reply())
    summarized = run(runtime, manual(session_id))
    assert isinstance(summarized, CompactionDone) and summarized.summary_message_id
    return failed, summarized


def assert_figures(
    events: list[Row], failed: CompactionFailed, summarized: CompactionDone, pruned: CompactionDone
) -> None:
    """The bubbles' metadata: each names its run and carries the figures the UI shows."""
    _, fail, _, done, _, prune_done, unpruned, unsummarized = events
    assert (fail["code"], fail["requestId"]) == ("llm_error", failed.request_id)
    assert {k: done[k] for k in ("runId", "summaryMessageId", "removedCount", "tokensAfter")} == {
        "runId": summarized.run_id,
        "summaryMessageId": summarized.summary_message_id,
        "removedCount": summarized.removed_count,
        "tokensAfter": summarized.tokens_after,
    }
    assert done["tokensBefore"] == summarized.tokens_before
    assert "summaryMessageId" not in prune_done and prune_done["runId"] == pruned.run_id
    assert (unpruned["runId"], unpruned["restoredMessages"], unpruned["restoredPruned"]) == (
        pruned.run_id,
        0,
        pruned.pruned_count,
    )
    assert (unsummarized["runId"], unsummarized["restoredPruned"]) == (summarized.run_id, 0)
    assert unsummarized["restoredMessages"] == summarized.removed_count


def test_display_view_bubbles_and_both_runs_restored_through_the_command_line(
    h: Harness, command: Command
) -> None:
    runtime = h.runtime(llm_max_retries=0)
    h.channel("openai")
    session_id = h.session(conversation(12, tool_chars=100))
    original = history(command, session_id, "compacted")
    failed, summarized = fail_then_summarize(h, runtime, session_id)
    h.store.append_messages(
        session_id, conversation(8, tool_chars=1_000, system=False, first_turn=100)
    )
    appended = history(command, session_id, "compacted")
    pruned = run(runtime, auto(session_id))  # over the threshold; pruning alone gets under
    assert isinstance(pruned, CompactionDone) and pruned.summary_message_id is None
    assert pruned.pruned_count > 0 and pruned.removed_count == 0

    compacted = history(command, session_id, "compacted")
    marked = [r for r in compacted if r["pruned_at"]]
    assert len(marked) == pruned.pruned_count
    assert {r["content"] for r in marked} == {PLACEHOLDER["en"]}
    assert [r["id"] for r in compacted] == [r["id"] for r in appended]
    status, text, _ = command("history", session_id, "--view", "display")
    assert status == 0
    marks = [line[15:19] for line in text.splitlines()[:-1]]  # id, seq, marks; then a legend
    assert marks.count("   E") == 6  # two bubbles per run
    assert marks.count("  P ") == pruned.pruned_count
    assert len(marks) == len(compacted) + 6

    assert stats(command, session_id)["compactions"] == 2  # a run that only pruned counts

    # The summarizing run stands under the pruning one: that one first.
    status, _, err = command("restore", str(summarized.run_id))
    assert status == 1 and "[invalid_request]" in err and "later compactions" in err
    assert command("restore", str(pruned.run_id))[0] == 0
    assert history(command, session_id, "compacted") == appended
    assert stats(command, session_id)["compactions"] == 1
    assert command("restore", str(summarized.run_id))[0] == 0
    compacted = history(command, session_id, "compacted")
    added = appended[-32:]  # conversation(8): four rows a turn
    assert conversation_of(compacted) == conversation_of(original + added)
    assert not any(is_event(r) or r["pruned_at"] or r["is_compaction_summary"] for r in compacted)

    display = history(command, session_id, "display")
    assert [r for r in display if not is_event(r)] == compacted
    seqs = [r["seq"] for r in display]
    assert seqs == sorted(seqs)
    events = [r["metadata"] for r in display if is_event(r)]
    assert [e["event"] for e in events] == [
        *("start", "failed"),
        *("start", "done"),
        *("start", "done"),
        *("restored", "restored"),
    ]
    assert_figures(events, failed, summarized, pruned)
    full = history(command, session_id, "full")
    summary = next(r for r in full if r["id"] == summarized.summary_message_id)
    assert summary["metadata"] == {"restoredByRunId": summarized.run_id}
    assert [s.status for s in h.store.runs(session_id)] == ["failed", "restored", "restored"]
    assert stats(command, session_id)["compactions"] == 0
