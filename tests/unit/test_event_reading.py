"""The one event-reading step every relay shares (``service.events``), without Redis: an
``XREAD`` reply in, typed events and the new position out."""

from __future__ import annotations

import time
from typing import Any

import pytest
import redis

from compaction.core.contract import CompactionDone, CompactionStart
from compaction.service.events import (
    BLOCK_MS,
    MAX_BACKOFF_S,
    StreamCursor,
    block_ms,
    final_among,
    newest_id,
    read_batch,
)


def entry(entry_id: str, event: Any) -> tuple[bytes, dict[bytes, bytes]]:
    data = event.to_json().encode() if hasattr(event, "to_json") else event
    return entry_id.encode(), {b"event": data}


def done(session_id: str, request_id: str) -> CompactionDone:
    return CompactionDone(
        session_id=session_id,
        request_id=request_id,
        removed_count=1,
        tokens_before=10,
        tokens_after=5,
    )


def reply(*entries: tuple[bytes, dict[bytes, bytes]]) -> list[Any]:
    return [(b"compaction:events:stream", list(entries))]


def test_every_entry_moves_the_position_the_filtered_and_invalid_ones_too() -> None:
    batches = reply(
        entry("1-0", CompactionStart(session_id="a", request_id="r1")),
        entry("2-0", b"{not json"),
        entry("3-0", CompactionStart(session_id="b", request_id="r2")),
        (b"4-0", {b"other": b"field"}),
    )
    position, events = read_batch(batches, "a", "0-0")
    assert position == "4-0"
    assert [(e.type, e.session_id) for e in events] == [("compaction_start", "a")]


def test_no_session_filter_gives_every_valid_event() -> None:
    batches = reply(entry("1-0", CompactionStart(session_id="a")), entry("2-0", done("b", "r")))
    assert [e.session_id for e in read_batch(batches, None, "0-0")[1]] == ["a", "b"]


def test_an_empty_reply_keeps_the_position() -> None:
    assert read_batch(None, None, "7-1") == ("7-1", [])
    assert read_batch([], "s", "7-1") == ("7-1", [])


def test_newest_id() -> None:
    assert newest_id([]) == "0-0"
    assert newest_id([(b"5-2", {})]) == "5-2"


def test_block_ms_shrinks_with_the_deadline_and_ends_after_it() -> None:
    assert block_ms(None) == BLOCK_MS
    assert 1 <= (block_ms(time.monotonic() + 0.2) or 0) <= 200
    assert block_ms(time.monotonic() - 1) is None


@pytest.mark.parametrize(("request_id", "found"), [("r1", True), ("unknown", True), ("r2", False)])
def test_final_among_recent_entries(request_id: str, found: bool) -> None:
    recent = [
        entry("3-0", done("other", "r1")),
        entry("2-0", done("s", "r1")),
        entry("1-0", CompactionStart(session_id="s", request_id="r2")),
    ]
    event = final_among(recent, "s", request_id)
    assert (event is not None) is found
    if event is not None:
        assert event.session_id == "s" and event.type == "compaction_done"


def test_cursor_reads_on_from_where_it_was_and_backs_off_after_failures() -> None:
    cursor = StreamCursor("stream", "0-0", "s", timeout=None)
    assert cursor.streams() == {"stream": "0-0"}
    waits = [cursor.failed(redis.ConnectionError("gone")) for _ in range(8)]
    assert waits[0] == 0.1 and waits == sorted(waits) and waits[-1] == MAX_BACKOFF_S
    events = cursor.take(reply(entry("9-0", done("s", "r"))))
    assert [e.request_id for e in events] == ["r"]
    assert cursor.streams() == {"stream": "9-0"}
    assert cursor.failed(redis.ConnectionError("again")) == 0.1  # a good read resets it


def test_cursor_stops_at_its_deadline() -> None:
    assert StreamCursor("stream", "0-0", None, timeout=0).block() is None
