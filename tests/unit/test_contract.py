"""The wire contract's shared rules (compaction/contract.py)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from compaction.contract import MAX_SESSION_ID, CompactionStart, valid_session_id


@pytest.mark.parametrize("value", ["s", "s" * MAX_SESSION_ID, "tenant:chat/1"])
def test_session_id_accepted_by_the_check_and_the_wire_models(value: str) -> None:
    assert valid_session_id(value)
    assert CompactionStart(session_id=value).session_id == value


@pytest.mark.parametrize("value", ["", "s" * (MAX_SESSION_ID + 1), None, 7])
def test_session_id_refused_by_the_check_and_the_wire_models(value: object) -> None:
    assert not valid_session_id(value)
    with pytest.raises(ValidationError):
        CompactionStart(session_id=value)  # type: ignore[arg-type]
