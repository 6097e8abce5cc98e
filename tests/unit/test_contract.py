"""The wire contract's shared rules (compaction/core/contract.py)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from compaction.core.contract import (
    MAX_SESSION_ID,
    CompactionDone,
    CompactionStart,
    parse_event,
    readable_ids,
    valid_session_id,
)


@pytest.mark.parametrize(
    "value", ["s", "s" * MAX_SESSION_ID, "tenant:chat:1", "s-\U0001f600", "...", ".env"]
)
def test_session_id_accepted_by_the_check_and_the_wire_models(value: str) -> None:
    assert valid_session_id(value)
    assert CompactionStart(session_id=value).session_id == value


@pytest.mark.parametrize(
    "value",
    # "/" and "\\" split a URL's path, "." and ".." are dot segments URL parsers drop: no URL
    # would reach the session (docs/architecture.md, "Tables")
    [
        *("", "s" * (MAX_SESSION_ID + 1), None, 7, "s\x00", "s\n", "s\x7f", "s\ud800"),
        *("tenant:chat/1", "a\\b", ".", ".."),
    ],
)
def test_session_id_refused_by_the_check_and_the_wire_models(value: object) -> None:
    assert not valid_session_id(value)
    with pytest.raises(ValidationError):
        CompactionStart(session_id=value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("data", "ids"),
    [
        ({"sessionId": "s1", "requestId": "r1", "reason": "never"}, ("s1", "r1")),
        ({"sessionId": "s1", "requestId": "r\udc00"}, ("s1", None)),
        ({"sessionId": "s\ud800", "requestId": "r1"}, (None, "r1")),
        ({"sessionId": "s1", "requestId": "r" * 65}, ("s1", None)),
        (["s1", "r1"], (None, None)),
    ],
)
def test_readable_ids_of_a_broken_payload_are_ids_an_event_takes(
    data: object, ids: tuple[str | None, str | None]
) -> None:
    assert readable_ids(data) == ids
    if ids[0] is not None:
        CompactionStart(session_id=ids[0], request_id=ids[1])


def test_stage_round_trips_and_is_absent_from_the_wire_when_unset() -> None:
    done = CompactionDone(
        session_id="s1", stage="loop", removed_count=3, tokens_before=900, tokens_after=300
    )
    assert done.to_wire()["stage"] == "loop"
    assert parse_event(done.to_json()) == done
    assert (
        "stage" not in CompactionStart(session_id="s1").to_wire()
    )  # older consumers see nothing new
    with pytest.raises(ValidationError):
        parse_event({"type": "compaction_start", "sessionId": "s1", "stage": "tools"})
