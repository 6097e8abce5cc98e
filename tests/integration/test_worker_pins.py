"""Pins through the store and the worker (docs/architecture.md, "Pins"), on SQLite and on real
PostgreSQL + Redis: a pinned row is loaded pinned, never compacted nor pruned by a run (the
compacted view holds it, in order, before the summary), the write path refuses a plan that
would mark one, and a pin refuses what cannot be pinned."""

from __future__ import annotations

import pytest
from sqlalchemy import update

from compaction.core.contract import CompactionDone
from compaction.core.errors import InvalidRequest, LockLost, NotFound, PinsOverThreshold
from compaction.core.messages import Message
from compaction.producers import Producers
from compaction.store import Store
from compaction.store.models import Message as MessageRow
from compaction.worker.jobs import run
from tests.fakes import conversation
from tests.integration.helpers import (
    compact_session,
    new_session,
    phase_one,
    plan,
    pruning_conversation,
    rows_by_id,
    seed_forty,
)
from tests.integration.worker_helpers import Harness, manual


def pin_directly(store: Store, message_id: int) -> None:
    """A pin written behind the store's back (no version bump): what the write path's own
    check must catch."""
    with store.factory.begin() as session:
        session.execute(update(MessageRow).where(MessageRow.id == message_id).values(pinned=True))


def test_a_pinned_row_survives_a_worker_run_in_place(h: Harness) -> None:
    runtime = h.runtime()
    h.channel("openai")
    h.script()
    session_id = h.session(conversation(40, tool_chars=100))
    ids = [s.id for s in h.store.load_history(session_id)]
    call, result = ids[14], ids[15]  # turn 3's call and its result (pinned: both stay)
    change = h.store.set_pinned(session_id, result, True)
    assert change.changed and change.pinned
    done = run(runtime, manual(session_id))
    assert isinstance(done, CompactionDone), done
    view = h.store.load_history(session_id)
    shown = [s.id for s in view]
    assert call in shown and result in shown
    summary = next(i for i, s in enumerate(view) if s.is_compaction_summary)
    assert shown.index(call) + 1 == shown.index(result) < summary  # in place, before it
    by_id = rows_by_id(h.store.load_history(session_id, "full"))
    assert by_id[result].compacted_at is None and by_id[result].message.pinned
    assert by_id[result].pruned_at is None
    assert by_id[result].message.content == conversation(40, tool_chars=100)[15].content
    folded = [s for s in by_id.values() if s.compacted_into_id == view[summary].id]
    assert folded and call not in {s.id for s in folded}


def test_the_write_refuses_a_plan_that_would_compact_a_pinned_row(store: Store) -> None:
    session_id, ids = new_session(store, seed_forty())
    planned = plan(store, session_id)
    assert ids[10] in planned.compressed_ids
    pin_directly(store, ids[10])
    before = store.load_history(session_id, "full")
    with pytest.raises(InvalidRequest, match=f"message {ids[10]} is pinned"):
        store.apply_compaction(planned.plan)
    assert store.load_history(session_id, "full") == before


def test_the_write_refuses_to_prune_a_pinned_row(store: Store) -> None:
    session_id, _ids = new_session(store, pruning_conversation())
    planned = phase_one(store, session_id)
    pin_directly(store, planned.result.pruned_ids[-1])
    before = store.load_history(session_id, "full")
    with pytest.raises(InvalidRequest, match="unpinned"):
        store.apply_compaction(planned.plan)
    assert store.load_history(session_id, "full") == before


def test_a_pin_fences_a_run_that_read_before_it(store: Store) -> None:
    session_id, ids = new_session(store, seed_forty())
    planned = plan(store, session_id)
    store.set_pinned(session_id, ids[30], True)  # the tail: the plan is still right, but stale
    with pytest.raises(LockLost):
        store.apply_compaction(planned.plan)


def test_a_compaction_planned_with_pins_marks_everything_else(store: Store) -> None:
    session_id, ids = new_session(store, seed_forty())
    store.set_pinned(session_id, ids[9], True)  # turn 2's user request
    planned, applied = compact_session(store, session_id)
    assert ids[9] in planned.result.kept_ids
    assert applied.removed_count == planned.result.removed_count
    view = store.load_history(session_id)
    assert [m.id for m in planned.expected_view(applied)] == [s.id for s in view]


def test_what_cannot_be_pinned_is_refused(store: Store) -> None:
    session_id, _ids = new_session(store, seed_forty())
    other, other_ids = new_session(store, seed_forty())
    with pytest.raises(NotFound):
        store.set_pinned(session_id, other_ids[3], True)
    with pytest.raises(NotFound):
        store.set_pinned(session_id, 10**9, True)
    _planned, applied = compact_session(store, session_id)
    summary = applied.summary_message_id
    assert summary is not None
    with pytest.raises(InvalidRequest, match="compaction summary"):
        store.set_pinned(session_id, summary, True)
    folded = next(s for s in store.load_history(session_id, "full") if s.compacted_at)
    with pytest.raises(InvalidRequest, match=f"folded into summary {summary}"):
        store.set_pinned(session_id, folded.id, True)
    event = store.append_event(session_id, "start", "compacting…")
    with pytest.raises(InvalidRequest, match="compaction event"):
        store.set_pinned(session_id, event, True)
    assert not any(s.message.pinned for s in store.load_history(session_id, "full"))
    # the same state again changes nothing; unpin undoes
    assert store.set_pinned(other, other_ids[5], True).changed
    assert not store.set_pinned(other, other_ids[5], True).changed
    assert store.set_pinned(other, other_ids[5], False).changed
    assert not rows_by_id(store.load_history(other))[other_ids[5]].message.pinned


def test_a_refused_check_changes_nothing(store: Store) -> None:
    session_id, ids = new_session(store, seed_forty())
    version = store.get_session(session_id).compaction_version

    def refuse(_messages: object) -> None:
        raise PinsOverThreshold("too many pins")

    with pytest.raises(PinsOverThreshold):
        store.set_pinned(session_id, ids[5], True, refuse)
    assert not rows_by_id(store.load_history(session_id))[ids[5]].message.pinned
    assert store.get_session(session_id).compaction_version == version


def test_producers_refuse_pins_over_the_threshold(ctx: Producers) -> None:
    """A 4,000-token window: threshold 2,800. Two ~1,000-token results pin; a third would bring
    the pins with the system prompt to the threshold: refused, nothing changed."""
    big = [m.with_content(m.content * 10) if m.role == "tool" else m for m in conversation(6)]
    session_id = ctx.store.create_session()
    ids = ctx.store.append_messages(session_id, big)
    results = [i for i, m in zip(ids, big, strict=True) if m.role == "tool"]
    first = ctx.pin(session_id, results[0])
    assert first["pinned"] and first["changed"] and first["pinnedTokens"] > 1_000
    second = ctx.pin(session_id, results[1])
    assert second["pinnedTokens"] > first["pinnedTokens"]
    version = ctx.store.get_session(session_id).compaction_version
    with pytest.raises(PinsOverThreshold, match="threshold of 2,800"):
        ctx.pin(session_id, results[2])
    assert not rows_by_id(ctx.store.load_history(session_id))[results[2]].message.pinned
    assert ctx.store.get_session(session_id).compaction_version == version
    assert ctx.session_stats(session_id)["pinnedTokens"] == second["pinnedTokens"]
    unpinned = ctx.unpin(session_id, results[0])
    assert not unpinned["pinned"] and unpinned["pinnedTokens"] < second["pinnedTokens"]


def test_the_stats_count_a_pinned_step(ctx: Producers) -> None:
    session_id = ctx.store.create_session()
    messages: list[Message] = conversation(3)
    ids = ctx.store.append_messages(session_id, messages)
    assert ctx.session_stats(session_id)["pinnedTokens"] == 0
    ctx.pin(session_id, ids[2])  # turn 0's call: its result counts too
    pinned = ctx.session_stats(session_id)["pinnedTokens"]
    step = ctx.session_stats(session_id)["tokensByRole"]
    assert 0 < pinned < step["assistant"] + step["tool"]
