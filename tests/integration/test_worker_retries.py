"""Retries of the auxiliary model back off (worker/llm/retry.py; docs/architecture.md,
"Settings"): each wait longer than the one before, jittered, capped, whatever the server asks:
a server that says "retry after 5 ms" is not hammered, one that says "after 30 s" is not waited
for. Through the job, the real SDKs and the loopback model server, which records when each
request arrived."""

from __future__ import annotations

import time
from itertools import pairwise

import pytest

from compaction.core.contract import CompactionFailed
from compaction.worker.jobs import run
from compaction.worker.llm.retry import BASE_S
from tests.fakes import conversation
from tests.integration.worker_helpers import SQLITE_ONLY, Harness, manual
from tests.llm_server import Reply

#: slack for an attempt's own time (connect, request, answer) on a loaded machine
SLACK_S = 0.4


def failing_gaps(h: Harness, provider: str, reply: Reply) -> list[float]:
    """A manual request whose every attempt gets ``reply``: the seconds between attempts."""
    runtime = h.runtime(llm_max_retries=2)
    h.script(reply)
    session_id = h.session(conversation(12))
    final = run(runtime, manual(session_id))
    assert isinstance(final, CompactionFailed) and final.code == "llm_error", final
    times = [r.at for r in h.fake.requests]
    assert len(times) == 3  # the attempt and its two retries
    return [later - earlier for earlier, later in pairwise(times)]


@SQLITE_ONLY
@pytest.mark.parametrize(
    ("provider", "reply"),
    [
        ("openai", Reply(status=500)),
        ("openai", Reply(status=503, headers={"retry-after-ms": "5"})),
        ("anthropic", Reply(status=529, headers={"retry-after": "0.005"})),
    ],
    ids=["500", "503-retry-after-5ms", "529-retry-after-5ms"],
)
def test_retries_wait_longer_each_time_and_jittered(
    h: Harness, provider: str, reply: Reply
) -> None:
    h.channel(provider)
    first = failing_gaps(h, provider, reply)
    second = failing_gaps(h, provider, reply)
    for gaps in (first, second):
        # the n-th retry waits between half and all of BASE_S * 2**(n-1)
        for n, gap in enumerate(gaps):
            ceiling = BASE_S * 2**n
            assert ceiling / 2 <= gap <= ceiling + SLACK_S, gaps
        assert gaps[1] > gaps[0], gaps
    # jittered: two requests failing alike do not retry in step
    assert any(abs(a - b) > 0.002 for a, b in zip(first, second, strict=True)), (first, second)


@SQLITE_ONLY
def test_a_server_wait_past_the_cap_ends_the_request_at_once(h: Harness) -> None:
    runtime = h.runtime(llm_max_retries=1)
    h.channel("anthropic")
    h.script(Reply(status=529, headers={"retry-after": "30"}))
    session_id = h.session(conversation(12))

    started = time.monotonic()
    final = run(runtime, manual(session_id))

    assert isinstance(final, CompactionFailed) and final.code == "llm_error", final
    assert time.monotonic() - started < 5
    assert len(h.fake.requests) == 1
