"""The agent's protected head holds through the worker's loop stage (docs/architecture.md, "The
algorithm"): a single-request agent whose setting protects its first five messages keeps them,
its first assistant step included, verbatim in the compacted view. Same harness as
``test_worker_jobs.py``."""

from __future__ import annotations

from dataclasses import replace

from compaction.core.contract import CompactionDone
from compaction.core.messages import Message
from compaction.worker.jobs import run
from tests.integration.worker_helpers import SQLITE_ONLY, Harness, manual
from tests.unit.builders import system, user
from tests.unit.test_loop import REQUEST, steps


def plain(message: Message) -> Message:
    return replace(message, id=None)


@SQLITE_ONLY
def test_the_loop_stage_keeps_the_agents_protected_head(h: Harness) -> None:
    runtime = h.runtime()
    h.channel()
    h.store.set_agent("coder", protect_first_n=5)
    messages = [system(), user(REQUEST), *steps(20)]
    session_id = h.store.create_session(agent_id="coder", messages=messages)

    done = run(runtime, manual(session_id))

    assert isinstance(done, CompactionDone) and done.stage == "loop", done
    view = [row.message for row in h.store.load_history(session_id)]
    # system, request, the first step (an assistant message and its two tool results)
    assert [plain(m) for m in view[:5]] == messages[:5]
    assert view[5].is_summary
    assert "step 0:" not in h.fake.bodies_text()  # never sent to be summarized
