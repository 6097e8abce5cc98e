"""The two stages through the worker on real loops (docs/architecture.md, "The job", "Two
segments" under "The algorithm"): the shared transcripts with the longest single-request tool
loops (mini-swe-agent, OpenHands, a Claude Code subagent), stored as sessions and compacted by
``worker.jobs.run`` under a threshold the history alone cannot meet (``loop_config``: the system
prompt, the request and a third of the loop). Each run is checked for its events, one run row
and one summary per stage, a provider-valid compacted view that keeps the request and the
recent steps verbatim, a full view that lost nothing; then a second compaction that folds the
loop summary, and a loop stage that fails after the history stage was written. Same harness as
``test_worker_jobs.py`` (every published event is checked against the schemas there)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

import pytest

from compaction.core.contract import (
    AnyEvent,
    CompactionDone,
    CompactionFailed,
    CompactionRequested,
    Stage,
    TokenUpdate,
    is_final,
)
from compaction.core.loop import RECENT_STEPS, is_loop_summary
from compaction.core.messages import SUMMARY_MARKER, Message
from compaction.core.validate import ensure_valid, problems
from compaction.store import StoredMessage
from compaction.worker.jobs import run
from compaction.worker.runtime import Runtime
from tests.fakes import load_transcript
from tests.integration.worker_helpers import Harness, auto, estimate_view
from tests.invariants import same_up_to_pruning
from tests.llm_server import Reply
from tests.unit.test_loop_transcripts import loop_config, request_index

MSA = "msa_deepseek-chat_astroid-1333"
OPENHANDS = "openhands_ponyc-4588"
CLAUDE_CODE = "cc_spotter_ae4a77f8"  # its last user message is at index 292
#: transcript → the stages its compaction runs: a single request has no history to compact
STAGES: dict[str, list[Stage]] = {
    MSA: ["loop"],
    OPENHANDS: ["history", "loop"],
    CLAUDE_CODE: ["history", "loop"],
}


def plain(message: Message) -> Message:
    """The message without the id the store gave it."""
    return replace(message, id=None)


def start(
    h: Harness, transcript: list[Message], stored: int | None = None, **settings: object
) -> tuple[Runtime, str]:
    """A runtime whose threshold is ``loop_config``'s for the whole transcript, and a session
    holding its first ``stored`` messages (all of them by default)."""
    config = loop_config(transcript)
    runtime = h.runtime(
        context_window=config.context_window, protect_first_n=config.protect_first_n, **settings
    )
    h.channel()
    return runtime, h.session(transcript[:stored])


def stage_events(
    h: Harness, request: CompactionRequested, stages: Sequence[Stage]
) -> list[CompactionDone]:
    """The request's start and done per stage, in order, each done naming the stage after it;
    the last done its final event, then the token update; the UI's rows the same."""
    events = [e for e in h.events(request.session_id) if e.request_id == request.request_id]
    *events, update = events
    expected = [(kind, s) for s in stages for kind in ("compaction_start", "compaction_done")]
    assert [(e.type, getattr(e, "stage", None)) for e in events] == expected
    dones = [e for e in events if isinstance(e, CompactionDone)]
    assert [d.next_stage for d in dones] == [*stages[1:], None]
    assert [is_final(e) for e in events] == [False] * (len(events) - 1) + [True]
    assert isinstance(update, TokenUpdate)
    assert update.context.used_tokens == dones[-1].tokens_after
    rows = [
        m.metadata or {}
        for m in h.state(request.session_id).events
        if (m.metadata or {}).get("requestId") == request.request_id
    ]
    assert [(r["event"], r["stage"]) for r in rows] == [
        (kind, s) for s in stages for kind in ("start", "done")
    ]
    return dones


def check_view(view: list[Message], transcript: list[Message]) -> None:
    """Provider-valid; the system prompt and the request verbatim; at most one history summary
    before the request, one execution summary right after it, then at least the recent steps
    whole and verbatim: the transcript's last messages."""
    assert problems(view) == [], problems(view)[:3]
    ensure_valid(view, provider="anthropic")
    if transcript[0].role == "system":
        assert plain(view[0]) == plain(transcript[0])
    request = request_index(view)
    assert plain(view[request]) == plain(transcript[request_index(transcript)])
    history = [m for m in view[:request] if m.is_summary]
    assert len(history) <= 1 and all(m.content.startswith(SUMMARY_MARKER) for m in history)
    assert not any(is_loop_summary(m) for m in history)
    summary, *recent = view[request + 1 :]
    assert is_loop_summary(summary) and not any(m.is_summary for m in recent)
    assert recent[0].role == "assistant"
    assert sum(m.role == "assistant" for m in recent) >= RECENT_STEPS
    assert [plain(m) for m in recent] == [plain(m) for m in transcript[-len(recent) :]]


def originals(rows: Sequence[StoredMessage]) -> list[Message]:
    """The conversation rows of a full view that are not summaries, as the agent sent them."""
    out: list[Message] = []
    for row in rows:
        if not row.is_compaction_summary:
            message = row.message
            out.append(plain(message.with_content(message.source_text)))
    return out


def check_written(
    h: Harness, runtime: Runtime, dones: list[CompactionDone], transcript: list[Message]
) -> None:
    """The request's run rows: one succeeded per stage; one summary per stage; the full view
    holds every message of the transcript, as sent; the last done's figures are the compacted
    view's."""
    session_id, request_id = dones[0].session_id, dones[0].request_id
    runs = [r for r in h.store.runs(session_id) if r.request_id == request_id]
    assert [(r.status, r.id) for r in runs] == [("succeeded", d.run_id) for d in dones]
    state = h.state(session_id)
    full = {m.id: m for m in state.conversation}
    for done in dones:
        summary = full[done.summary_message_id or 0]
        replaced = [m for m in state.conversation if m.compacted_into_id == summary.id]
        assert summary.is_compaction_summary and len(replaced) == done.removed_count > 0
    assert originals(state.conversation) == [plain(m) for m in transcript]  # nothing lost
    assert dones[-1].tokens_after == estimate_view(runtime, state)


@pytest.mark.parametrize("name", list(STAGES))
def test_a_real_loop_is_compacted_in_its_stages(h: Harness, name: str) -> None:
    transcript = load_transcript(name)
    runtime, session_id = start(h, transcript)
    request = auto(session_id)

    final = run(runtime, request)

    assert isinstance(final, CompactionDone), final
    dones = stage_events(h, request, STAGES[name])
    state = h.state(session_id)
    check_view([m.message for m in state.compacted], transcript)
    check_written(h, runtime, dones, transcript)
    before, after = dones[0].tokens_before, final.tokens_after
    threshold = runtime.settings.compaction_config().threshold_tokens
    figures = f"{name}: {before} -> {after} tokens, threshold {threshold}"
    assert after < threshold or after * 3 < before, figures
    if "history" in STAGES[name]:  # the history alone was not enough
        assert dones[0].tokens_after >= threshold, figures


def held_back(transcript: list[Message]) -> int:
    """Where the steps held back for the second compaction begin: the last two fifths of the
    loop, from an assistant step."""
    request = request_index(transcript)
    first = request + 1 + (len(transcript) - request - 1) * 3 // 5
    return next(i for i in range(first, len(transcript)) if transcript[i].role == "assistant")


def first_run_snippets(h: Harness, session_id: str, summary_id: int) -> list[str]:
    """Distinctive openings (as JSON text) of the rows the first loop summary replaced: found
    in no other message of the session."""
    rows = h.state(session_id).conversation
    texts = [m.message.source_text for m in rows]
    openings = [m.message.source_text[:120] for m in rows if m.compacted_into_id == summary_id]
    return [
        json.dumps(opening, ensure_ascii=False)[1:-1]
        for opening in openings
        if len(opening) >= 40 and sum(opening in text for text in texts) == 1
    ]


@pytest.mark.parametrize("name", [MSA, CLAUDE_CODE])
def test_the_next_loop_compaction_folds_the_last_one(h: Harness, name: str) -> None:
    transcript = load_transcript(name)
    cut = held_back(transcript)
    runtime, session_id = start(h, transcript, cut)
    first = run(runtime, auto(session_id))
    assert isinstance(first, CompactionDone) and first.stage == "loop", first
    assert first.summary_message_id is not None
    first_requests = len(h.fake.requests)
    h.store.append_messages(session_id, transcript[cut:])  # the agent went on
    request = auto(session_id)

    final = run(runtime, request)

    assert isinstance(final, CompactionDone), final
    dones = stage_events(h, request, ["loop"])
    state = h.state(session_id)
    check_view([m.message for m in state.compacted], transcript)
    check_written(h, runtime, dones, transcript)
    # the first execution summary is folded into the new one, its turns never read again
    folded = {m.id: m for m in state.conversation}[first.summary_message_id]
    assert folded.compacted_into_id == final.summary_message_id
    snippets = first_run_snippets(h, session_id, first.summary_message_id)
    first_text = json.dumps([r.body for r in h.fake.requests[:first_requests]], ensure_ascii=False)
    second_text = json.dumps([r.body for r in h.fake.requests[first_requests:]], ensure_ascii=False)
    assert len(snippets) >= 5 and all(s in first_text for s in snippets)
    assert not [s for s in snippets if s in second_text]


def fail_the_loop_stage(h: Harness) -> tuple[list[Message], str, AnyEvent]:
    """OpenHands compacted with the history's summary answered and the loop's refused (500):
    the transcript, the session and the final event."""
    transcript = load_transcript(OPENHANDS)
    runtime, session_id = start(h, transcript, llm_max_retries=0)
    h.script(Reply(), Reply(status=500))
    return transcript, session_id, run(runtime, auto(session_id))


def test_a_failed_loop_stage_leaves_the_history_stage_written(h: Harness) -> None:
    transcript, session_id, final = fail_the_loop_stage(h)

    assert isinstance(final, CompactionFailed) and final.code == "llm_error", final
    events = h.events(session_id)
    assert [(e.type, getattr(e, "stage", None)) for e in events] == [
        ("compaction_start", "history"),
        ("compaction_done", "history"),
        ("compaction_start", "loop"),
        ("compaction_failed", "loop"),
    ]
    history = events[1]
    assert isinstance(history, CompactionDone) and history.next_stage == "loop"
    assert [is_final(e) for e in events] == [False, False, False, True]
    runs = h.store.runs(session_id)
    assert [(r.status, r.code) for r in runs] == [("succeeded", None), ("failed", "llm_error")]
    state = h.state(session_id)
    assert state.event_kinds == ["start", "done", "start", "failed"]
    view = [m.message for m in state.compacted]
    assert problems(view) == []
    [summary] = [m for m in view if m.is_summary]
    assert summary.id == history.summary_message_id and not is_loop_summary(summary)
    # the loop as it was, up to the history stage's pruning: the request and every step
    loop = transcript[request_index(transcript) :]
    kept = view[request_index(view) :]
    assert len(kept) == len(loop)
    assert all(same_up_to_pruning(plain(k), plain(o)) for k, o in zip(kept, loop, strict=True))
    assert originals(state.conversation) == [plain(m) for m in transcript]
    assert h.lock_value(session_id) is None
