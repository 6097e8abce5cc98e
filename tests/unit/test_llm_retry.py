"""The auxiliary model's retries (worker/llm/retry.py): which failures are retried, how long each
retry waits (exponential, capped, jittered; a server's wait honoured up to the cap), and that the
last failure is raised as it came. The real SDKs and a loopback server: test_worker_retries.py."""

from __future__ import annotations

from typing import Any

import pytest

from compaction.worker.llm.base import SdkErrors
from compaction.worker.llm.retry import BASE_S, CAP_S, backoff, retrying, server_wait


class Timeout(Exception):
    pass


class Status(Exception):
    def __init__(self, status_code: int, headers: dict[str, str] | None = None) -> None:
        super().__init__(f"status {status_code}")
        self.status_code = status_code
        self.response = type("Response", (), {"headers": headers or {}})()


class Other(Exception):
    pass


class Connection(Other):
    pass


ERRORS = SdkErrors(Timeout, Status, Other, Connection)


def failing(*raised: Exception) -> tuple[Any, list[float]]:
    """An attempt that raises ``raised`` in turn, then answers "ok"; the waits slept."""
    queue, waits = list(raised), []

    def attempt() -> str:
        if queue:
            raise queue.pop(0)
        return "ok"

    def sleep(seconds: float) -> None:
        waits.append(seconds)

    return (lambda retries: retrying(attempt, retries=retries, errors=ERRORS, sleep=sleep)), waits


def test_backoff_doubles_is_capped_and_jitters_the_upper_half() -> None:
    assert [backoff(n, lambda: 0.0) for n in (1, 2, 3)] == [BASE_S / 2, BASE_S, BASE_S * 2]
    assert backoff(1, lambda: 0.999) == pytest.approx(BASE_S, rel=1e-3)
    assert backoff(30, lambda: 0.999) <= CAP_S
    assert len({round(backoff(3), 6) for _ in range(20)}) > 1


@pytest.mark.parametrize(
    "error",
    [Timeout(), Connection(), Status(500), Status(529), Status(429), Status(408), Status(409)],
    ids=["timeout", "connection", "500", "529", "429", "408", "409"],
)
def test_failures_that_may_pass_are_retried_with_growing_waits(error: Exception) -> None:
    call, waits = failing(error, error, error)
    assert call(3) == "ok"
    assert len(waits) == 3 and waits[0] < waits[1] < waits[2]


@pytest.mark.parametrize("error", [Status(400), Status(401), Other()], ids=["400", "401", "other"])
def test_answers_that_will_not_change_are_raised_at_once(error: Exception) -> None:
    call, waits = failing(error)
    with pytest.raises(type(error)) as caught:
        call(3)
    assert caught.value is error and waits == []


def test_the_last_failure_is_raised_after_the_retries() -> None:
    last = Status(503)
    call, waits = failing(Status(500), Status(502), last)
    with pytest.raises(Status) as caught:
        call(2)
    assert caught.value is last and len(waits) == 2


def test_a_servers_wait_is_a_floor_up_to_the_cap() -> None:
    call, waits = failing(Status(429, {"retry-after": "3"}), Status(503, {"retry-after-ms": "5"}))
    assert call(2) == "ok"
    assert waits[0] == 3.0  # over the first backoff: honoured
    assert BASE_S <= waits[1] <= 2 * BASE_S  # 5 ms: the second backoff instead


def test_a_servers_wait_past_the_cap_is_not_waited_for() -> None:
    call, waits = failing(Status(429, {"retry-after": str(CAP_S * 10)}))
    with pytest.raises(Status):
        call(3)
    assert waits == []


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after": "2"}, 2.0),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),  # a date past: no wait
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_server_wait_reads_the_headers(headers: dict[str, str], seconds: float | None) -> None:
    assert server_wait(Status(429, headers)) == seconds
