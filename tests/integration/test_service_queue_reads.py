"""``service.queue.pending_and_running``: the queued and the running request in one read, as
``pending_request`` and ``running_request`` read them one at a time."""

from __future__ import annotations

import redis

from compaction.service.keys import lock_key, lock_token, pending_key, pending_value
from compaction.service.queue import (
    pending_and_running,
    pending_request,
    queued_or_running,
    running_request,
)
from tests.services import RedisNamespace


def test_both_none_either_or_both(
    redis_client: redis.Redis, redis_namespace: RedisNamespace
) -> None:
    prefix = redis_namespace.prefix

    def read() -> tuple[str | None, str | None]:
        both = pending_and_running(redis_client, prefix, "s1")
        assert both == (
            pending_request(redis_client, prefix, "s1"),
            running_request(redis_client, prefix, "s1"),
        )
        return both

    assert read() == (None, None)
    assert queued_or_running(redis_client, prefix, "s1") is None
    redis_client.set(lock_key(prefix, "s1"), lock_token("req-running"))
    assert read() == (None, "req-running")
    assert queued_or_running(redis_client, prefix, "s1") == "req-running"
    redis_client.set(pending_key(prefix, "s1"), pending_value("auto", "req-queued"))
    assert read() == ("req-queued", "req-running")
    assert queued_or_running(redis_client, prefix, "s1") == "req-queued"
    redis_client.delete(lock_key(prefix, "s1"))
    assert read() == ("req-queued", None)
