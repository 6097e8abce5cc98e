"""A Redis namespace: a random key prefix and queue name on a shared Redis, for the integration
tests (``tests/services.py``) and the benchmarks, so that runs at once on one machine never
see each other's keys (docs/architecture.md, "Tests"). It lives in ``tests/``: the benchmarks
import the suite's harness, never the other way round.

What the service writes under the prefix and RQ writes for the queue is the namespace's alone;
``clear`` deletes only those keys, never the whole database: the Redis is shared.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Self

import redis
from rq import Queue
from rq.job import Job
from rq.registry import BaseRegistry
from rq.serializers import JSONSerializer


@dataclass(frozen=True)
class RedisNamespace:
    prefix: str
    queue: str
    url: str

    @classmethod
    def fresh(cls, url: str, tag: str = "test") -> Self:
        name = f"{tag}-{uuid.uuid4().hex[:12]}"
        return cls(prefix=name, queue=name, url=url)

    def on(self, url: str) -> Self:
        """The same names on another server (a private redis-server)."""
        return dataclasses.replace(self, url=url)

    def settings(self) -> dict[str, Any]:
        """``Settings`` overrides that point the service at this namespace."""
        return {"redis_url": self.url, "channel_prefix": self.prefix, "queue_name": self.queue}

    def env(self) -> dict[str, str]:
        """The same, as the environment of a worker, ingress or command-line process."""
        return {
            "COMPACTION_REDIS_URL": self.url,
            "COMPACTION_CHANNEL_PREFIX": self.prefix,
            "COMPACTION_QUEUE_NAME": self.queue,
        }

    def client(self, **options: Any) -> redis.Redis:
        """A client of the namespace's server, checked with a PING (``redis.ConnectionError``
        when the server is not reachable)."""
        client = redis.Redis.from_url(self.url, **options)
        client.ping()
        return client

    def clear(self, client: redis.Redis) -> None:
        """Delete the prefix's keys and the queue's RQ keys: its jobs (RQ deletes a job's
        results and executions with it), the workers that listened to it, then every RQ key
        that names the queue (the queue, its registries, their bookkeeping)."""
        queue = Queue(self.queue, connection=client, serializer=JSONSerializer)
        registries: list[BaseRegistry] = [
            queue.started_job_registry,
            queue.finished_job_registry,
            queue.failed_job_registry,
            queue.deferred_job_registry,
            queue.scheduled_job_registry,
            queue.canceled_job_registry,
        ]
        ids = {*queue.get_job_ids(), *(i for r in registries for i in r.get_job_ids())}
        for job in Job.fetch_many(sorted(ids), connection=client, serializer=JSONSerializer):
            if job is not None:
                job.delete()
        workers = [w.decode() for w in client.smembers(f"rq:workers:{self.queue}")]  # type: ignore[union-attr]
        if workers:
            client.srem("rq:workers", *workers)
        client.srem("rq:queues", f"rq:queue:{self.queue}")
        doomed = [*workers]
        for pattern in (f"{self.prefix}:*", f"rq:*{self.queue}*"):
            doomed += client.scan_iter(match=pattern, count=1_000)
        if doomed:
            client.delete(*doomed)


@contextmanager
def scoped(namespace: RedisNamespace) -> Iterator[redis.Redis]:
    """A client of ``namespace``'s server; the namespace is cleared when the block ends."""
    client = namespace.client()
    try:
        yield client
    finally:
        namespace.clear(client)
        client.close()
