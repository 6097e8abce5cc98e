"""Bounds on what a compaction may do, through the job (docs/algorithm.md, "Bounds"): a message
already stored alone over the threshold is kept whole and the rest compacts around it (it no
longer fails every compaction while it is the latest); a stage whose result is not smaller
than its input is not applied: ``compaction_skipped`` (``not_smaller``), the history unchanged,
the run recorded. Same harness as test_worker_jobs.py."""

from __future__ import annotations

import pytest

from compaction.core.contract import CompactionDone, CompactionSkipped
from compaction.core.messages import Message
from compaction.worker.jobs import run
from tests.fakes import conversation
from tests.integration.worker_helpers import Harness, auto, manual
from tests.llm_server import Reply

#: alone far over the harness's threshold (70% of a 4,000-token window)
HUGE = "Here is the whole log file, please read it. " * 1_500


@pytest.mark.parametrize("request_of", [auto, manual])
def test_a_stored_message_over_the_threshold_is_kept_and_the_rest_compacts(
    h: Harness, request_of: object
) -> None:
    runtime = h.runtime()
    h.channel("openai")
    h.script(Reply())
    huge = Message(role="user", content=HUGE)
    session_id = h.session([*conversation(12), huge])
    before = h.state(session_id)
    request = request_of(session_id)  # type: ignore[operator]

    done = run(runtime, request)

    assert isinstance(done, CompactionDone), done
    assert done.tokens_after < done.tokens_before and done.removed_count > 0
    after = h.state(session_id)
    assert after.compacted[-1].message.content == HUGE
    assert any(s.is_compaction_summary for s in after.compacted)
    assert len(after.compacted) < len(before.compacted)
    assert {m.id for m in before.conversation} <= {m.id for m in after.conversation}
    assert [r.status for r in h.store.runs(session_id)] == ["succeeded"]


def test_a_result_not_smaller_than_its_input_is_not_applied(h: Harness) -> None:
    runtime = h.runtime()
    h.channel("openai")
    # A middle of a few hundred tokens, and a summary of ~3,000 (under summary_too_long's
    # twice the 2,000-token budget): the "compaction" would grow the session.
    h.script(Reply(text="## Goal\n" + "Keep every detail of the session verbatim. " * 270))
    session_id = h.session(conversation(4, tool_chars=50))
    before = h.state(session_id)
    request = manual(session_id)

    final = run(runtime, request)

    assert isinstance(final, CompactionSkipped), final
    assert (final.code, final.stage, final.request_id) == (
        "not_smaller",
        "history",
        request.request_id,
    )
    assert final.detail and "not smaller" in final.detail
    assert [e.type for e in h.events(session_id)] == ["compaction_start", "compaction_skipped"]
    after = h.state(session_id)
    assert after.unchanged_since(before)
    assert after.event_kinds == ["start", "skipped"]
    [record] = h.store.runs(session_id)
    assert (record.status, record.code, record.request_id) == (
        "skipped",
        "not_smaller",
        request.request_id,
    )
    assert record.tokens_before is not None and record.tokens_before > 0
