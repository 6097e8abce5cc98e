"""The store's history (docs/architecture.md, "Tables"): the three views, compaction written back
and read again, event rows (the display view's bubbles), iterative compaction. Appending is
test_store_sessions.py; persisted pruning test_store_pruning.py.

Every test runs against SQLite and against the real PostgreSQL database (``store`` fixture).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from sqlalchemy import Engine

from compaction import CompactionConfig, InvalidRequest, Message
from compaction.core.errors import DatabaseError
from compaction.store import EventRow, Store, StoredMessage
from compaction.store.records import View
from tests.fakes import conversation
from tests.integration.helpers import (
    compact_session,
    driver_error,
    failing,
    messages_of,
    new_session,
    plan,
    rows_by_id,
    seed_forty,
)


def with_ids(messages: list[Message], ids: list[int]) -> list[Message]:
    """The messages as the database numbers them."""
    assert len(messages) == len(ids)
    return [replace(m, id=i) for m, i in zip(messages, ids, strict=True)]


def assert_summaries_follow_what_they_replaced(full: list[StoredMessage]) -> None:
    """Each summary comes right after the rows it replaced: the row before it is one of them,
    and none of them comes after it."""
    position = {stored.id: index for index, stored in enumerate(full)}
    for index, stored in enumerate(full):
        if not stored.is_compaction_summary:
            continue
        replaced = [s for s in full if s.compacted_into_id == stored.id]
        assert replaced, f"summary {stored.id} replaced nothing"
        assert full[index - 1].compacted_into_id == stored.id
        assert max(position[s.id] for s in replaced) == index - 1
        between = full[position[replaced[0].id] : index]
        assert all(s.compacted_at is not None or s.is_event for s in between)


# --- the views ---------------------------------------------------------------------


def test_both_views_give_back_what_was_appended(store: Store) -> None:
    messages = conversation(5)
    session_id, ids = new_session(store, messages)
    expected = with_ids(messages, ids)
    assert messages_of(store.load_history(session_id)) == expected
    assert messages_of(store.load_history(session_id, view="compacted")) == expected
    assert messages_of(store.load_history(session_id, view="display")) == expected
    full = store.load_history(session_id, view="full")
    assert messages_of(full) == expected
    assert not any(s.compacted_at or s.pruned_at or s.is_compaction_summary for s in full)
    assert store.latest_summary(session_id) is None


def test_unknown_view_is_refused(store: Store) -> None:
    session_id, _ = new_session(store, conversation(1))
    with pytest.raises(InvalidRequest) as err:
        store.load_history(session_id, "raw")  # type: ignore[arg-type]
    assert err.value.code == "invalid_request"


# --- docs/architecture.md, "Tests": 40 messages, one compaction -----------------------------------


def test_seed_forty_messages_compaction_marks_exactly_the_middle(store: Store) -> None:
    messages = seed_forty()
    session_id, ids = new_session(store, messages)
    assert len(ids) == 40
    planned, applied = compact_session(store, session_id)
    result = planned.result
    middle = set(result.compressed_ids)

    # The core's middle is a contiguous run of rows after the protected head.
    start, end = result.middle
    assert result.compressed_ids == ids[start:end] and len(middle) >= 2
    assert applied.removed_count == result.removed_count == len(middle)
    assert applied.version == store.get_session(session_id).compaction_version == 1

    compacted = store.load_history(session_id)
    assert len(compacted) < 40
    assert len(compacted) == 40 - len(middle) + 1
    assert messages_of(compacted) == planned.expected_view(applied)
    assert [s.id for s in compacted if s.is_compaction_summary] == [applied.summary_message_id]
    assert not any(s.compacted_at for s in compacted)

    full = store.load_history(session_id, "full")
    assert len(full) == 41
    assert {s.id for s in full} == {*ids, applied.summary_message_id}
    marked = {s.id for s in full if s.compacted_at is not None}
    assert marked == middle
    assert {s.id for s in full if s.compacted_into_id is not None} == middle
    assert {s.compacted_into_id for s in full if s.id in middle} == {applied.summary_message_id}
    # One statement marked them: one timestamp.
    assert len({s.compacted_at for s in full if s.id in middle}) == 1
    # Nothing is lost: every original row, whole, in order, the summary after the middle.
    originals = [s for s in full if not s.is_compaction_summary]
    assert messages_of(originals) == with_ids(messages, ids)
    summary_at = next(i for i, s in enumerate(full) if s.is_compaction_summary)
    assert full[summary_at - 1].id == result.compressed_ids[-1]
    assert full[summary_at + 1].id == ids[end]
    assert_summaries_follow_what_they_replaced(full)
    summary = full[summary_at]
    assert summary.message.content == result.summary_text
    assert summary.message.role == "user" and summary.message.is_summary
    assert summary.compacted_at is None and summary.compacted_into_id is None

    latest = store.latest_summary(session_id)
    assert latest is not None and latest.id == applied.summary_message_id


def test_event_rows_show_in_the_display_and_full_views_never_the_models(store: Store) -> None:
    first, second = seed_forty()[:20], conversation(5, system=False, first_turn=10)
    session_id, ids = new_session(store, first)
    # An event row inside what will be the compacted middle, and one more later.
    start_event = store.append_event(session_id, "start", "Compacting…", {"requestId": "r1"})
    ids += store.append_messages(session_id, second)
    planned, applied = compact_session(
        store, session_id, event=EventRow("Context compacted", {"requestId": "r1"})
    )
    assert planned.plan.summary is not None
    first_seq, last_seq = planned.plan.summary.first_seq, planned.plan.summary.last_seq
    full = store.load_history(session_id, "full")
    events = [s for s in full if s.is_event]
    assert [e.message.content for e in events] == ["Compacting…", "Context compacted"]
    start, done = events
    assert start.id == start_event and first_seq < start.seq < last_seq
    # Inside the marked range, the event row is not compacted: it is no conversation.
    assert start.compacted_at is None and start.compacted_into_id is None
    assert start.message.role == "system"
    assert start.metadata == {"systemType": "compaction_event", "event": "start", "requestId": "r1"}
    assert done.metadata == {
        "systemType": "compaction_event",
        "event": "done",
        "runId": applied.run_id,
        "summaryMessageId": applied.summary_message_id,
        "requestId": "r1",
    }
    assert done.seq == store.get_session(session_id).last_seq  # after everything else

    compacted = store.load_history(session_id)
    assert not any(s.is_event for s in compacted)
    assert {start.id, done.id}.isdisjoint(s.id for s in compacted)
    assert messages_of(compacted) == planned.expected_view(applied)
    assert {s.id for s in full if s.compacted_at} == set(planned.compressed_ids)
    assert applied.removed_count == len(planned.compressed_ids)
    # The user's screen: the model's view with both bubbles where they happened, the start
    # bubble kept though the rows around it were compacted.
    display = store.load_history(session_id, "display")
    assert [s.id for s in display if not s.is_event] == [s.id for s in compacted]
    assert [s.id for s in display if s.is_event] == [start.id, done.id]
    assert [(s.seq, s.seq_minor) for s in display] == sorted((s.seq, s.seq_minor) for s in display)
    assert display[-1].id == done.id and display[-1].metadata == done.metadata

    # A later compaction's view still has no event rows, whatever was appended since.
    failed = store.append_event(session_id, "failed", "Compaction failed", {"code": "x"})
    assert messages_of(store.load_history(session_id)) == messages_of(compacted)
    later = store.load_history(session_id, "display")
    assert [s.id for s in later] == [*(s.id for s in display), failed]


# --- iterative compaction --------------------------------------------------------------------


def test_second_compaction_replaces_the_first_summary(store: Store) -> None:
    session_id, ids = new_session(store, seed_forty())
    first, applied1 = compact_session(store, session_id)
    summary1 = store.latest_summary(session_id)
    assert summary1 is not None and summary1.id == applied1.summary_message_id
    ids += store.append_messages(session_id, conversation(10, system=False, first_turn=100))

    second = plan(store, session_id)
    # The first summary is found in the middle and handed to the summarizer as the previous one.
    assert applied1.summary_message_id in second.result.compressed_ids
    request = second.summarizer.requests[0]
    assert request.previous_summary
    assert request.previous_summary in summary1.message.content
    assert summary1.message.content not in request.serialized
    applied2 = store.apply_compaction(second.plan)
    assert applied2.version == 2
    assert applied2.removed_count == second.result.removed_count
    assert applied2.removed_count == len(second.result.compressed_ids)

    compacted = store.load_history(session_id)
    assert messages_of(compacted) == second.expected_view(applied2)
    assert [s.id for s in compacted if s.is_compaction_summary] == [applied2.summary_message_id]
    latest = store.latest_summary(session_id)
    assert latest is not None and latest.id == applied2.summary_message_id

    full = store.load_history(session_id, "full")
    assert {s.id for s in full} == {*ids, applied1.summary_message_id, applied2.summary_message_id}
    by_id = rows_by_id(full)
    old = by_id[applied1.summary_message_id]
    assert old.is_compaction_summary and old.compacted_at is not None
    assert old.compacted_into_id == applied2.summary_message_id
    # The rows of the first run still point at the first summary.
    assert all(
        by_id[i].compacted_into_id == applied1.summary_message_id for i in first.compressed_ids
    )
    into_second = {s.id for s in full if s.compacted_into_id == applied2.summary_message_id}
    assert into_second == set(second.result.compressed_ids)
    assert [s.id for s in full if s.is_compaction_summary and s.compacted_at is None] == [
        applied2.summary_message_id
    ]
    assert_summaries_follow_what_they_replaced(full)
    # The full view is the whole conversation, both summaries in place.
    assert [s.seq for s in full] == sorted(s.seq for s in full)


def test_latest_summary_is_the_newest_visible_one(store: Store) -> None:
    session_id, _ = new_session(store, seed_forty())
    assert store.latest_summary(session_id) is None
    _, applied1 = compact_session(store, session_id)
    latest = store.latest_summary(session_id)
    assert latest is not None and latest.id == applied1.summary_message_id
    assert latest.is_compaction_summary and latest.message.is_summary
    store.append_messages(session_id, conversation(10, system=False, first_turn=50))
    _, applied2 = compact_session(store, session_id, CompactionConfig(context_window=4_000))
    latest = store.latest_summary(session_id)
    assert latest is not None and latest.id == applied2.summary_message_id
    store.restore(applied2.run_id)
    latest = store.latest_summary(session_id)
    assert latest is not None and latest.id == applied1.summary_message_id
    store.restore(applied1.run_id)
    assert store.latest_summary(session_id) is None


@pytest.mark.parametrize("view", ["compacted", "display", "full"])
def test_incremental_reads_return_only_later_rows(store: Store, view: View) -> None:
    # The per-turn trigger reads only what came after the last row it counted.
    session_id, _ = new_session(store, seed_forty())
    compact_session(store, session_id, event=EventRow("Context compacted"))
    whole = store.load_history(session_id, view)
    cut = whole[len(whole) // 2].seq
    later = store.load_history(session_id, view, after_seq=cut)
    assert [s.id for s in later] == [s.id for s in whole if s.seq > cut]
    assert later and len(later) < len(whole)
    assert store.load_history(session_id, view, after_seq=whole[-1].seq) == []


# --- a driver error ----------------------------------------------------------------------


def test_a_driver_error_while_loading_is_db_error_unchained(store: Store, engine: Engine) -> None:
    session_id, _ = new_session(store, conversation(2))
    with (
        failing(
            engine, lambda s: s.normalized.startswith("select"), error=lambda: driver_error(engine)
        ),
        pytest.raises(DatabaseError) as err,
    ):
        store.load_history(session_id)
    assert err.value.code == "db_error"
    assert str(err.value) == "database error: injected failure"  # no statement, no values
    assert err.value.__cause__ is None and err.value.__suppress_context__
