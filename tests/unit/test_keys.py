"""The pending key's value (service/keys.py; docs/architecture.md, "Redis keys"): it tells the
queued request's reason and id, whatever the id holds, and a value written by someone else
never reads as an auto request (which a ``/compact`` would upgrade)."""

from __future__ import annotations

import pytest

from compaction.core.contract import Reason
from compaction.service.keys import pending_parts, pending_value


@pytest.mark.parametrize("reason", ["auto", "manual"])
@pytest.mark.parametrize("request_id", ["r1", "a:b:c", "auto:x", ":", "请求-1"])
def test_the_value_gives_back_its_reason_and_request_id(reason: Reason, request_id: str) -> None:
    value = pending_value(reason, request_id)
    assert value == f"{reason}:{request_id}"
    assert pending_parts(value) == (reason, request_id)


@pytest.mark.parametrize("value", ["r1", "Auto:r1", "later:r1", "auto", ""])
def test_a_value_naming_no_reason_is_a_manual_request_of_that_id(value: str) -> None:
    assert pending_parts(value) == ("manual", value)
