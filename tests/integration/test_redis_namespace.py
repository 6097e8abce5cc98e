"""The suite's Redis namespaces (``tests/services.py``): clearing one deletes every key the
service and RQ wrote for it, and nothing of another namespace on the same server."""

from __future__ import annotations

import uuid

import redis
from rq import Queue, SimpleWorker
from rq.serializers import JSONSerializer

from compaction.service.keys import events_stream, lock_key
from tests.services import RedisNamespace, fresh_namespace


def fill(client: redis.Redis, namespace: RedisNamespace) -> str:
    """A lock, an event stream, and RQ's traces of a finished and a failed job; returns the
    jobs' id stem (job ids never name the queue)."""
    client.set(lock_key(namespace.prefix, "s1"), "token")
    client.xadd(events_stream(namespace.prefix), {"event": "{}"})
    stem = f"job-{uuid.uuid4().hex}"
    queue = Queue(namespace.queue, connection=client, serializer=JSONSerializer)
    queue.enqueue_call("builtins.len", args=("abc",), job_id=f"{stem}-ok")
    queue.enqueue_call("builtins.int", args=("not a number",), job_id=f"{stem}-bad")
    SimpleWorker([queue], connection=client, serializer=JSONSerializer).work(burst=True)
    return stem


def naming(client: redis.Redis, *needles: str) -> set[str]:
    keys = (k.decode() for k in client.scan_iter(count=1_000))
    return {k for k in keys if any(n in k for n in needles)}


def test_clear_deletes_its_own_keys_and_leaves_another_namespace_alone(
    redis_namespace: RedisNamespace, redis_client: redis.Redis
) -> None:
    with fresh_namespace() as neighbour:
        mine = fill(redis_client, redis_namespace)
        theirs = fill(redis_client, neighbour)
        before = naming(redis_client, neighbour.prefix, theirs)
        assert f"rq:job:{theirs}-bad" in before and f"rq:results:{theirs}-ok" in before
        assert naming(redis_client, redis_namespace.prefix, mine)

        redis_namespace.clear(redis_client)

        assert naming(redis_client, redis_namespace.prefix, mine) == set()
        assert naming(redis_client, neighbour.prefix, theirs) == before
        assert f"rq:queue:{redis_namespace.queue}".encode() not in redis_client.smembers(
            "rq:queues"
        )
