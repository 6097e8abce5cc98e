"""Real services for the integration tests (docs/architecture.md, "Tests"): PostgreSQL and Redis
on this machine.

A missing service is a test failure with the command that starts it, never a skip. Several test
runs may share the machine at once (two clones, two pytest): each run gets databases of its own
and, on the shared Redis, a key prefix and a queue name of its own (``RedisNamespace``).
"""

from __future__ import annotations

import dataclasses
import os
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest
import redis
from rq import Queue
from rq.job import Job
from rq.registry import BaseRegistry
from rq.serializers import JSONSerializer

REDIS_URL = os.environ.get("COMPACTION_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
POSTGRES_ADMIN_URL = os.environ.get(
    "COMPACTION_TEST_POSTGRES_URL", "postgresql://127.0.0.1:5432/test"
)
START_POSTGRES = "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start"


def admin_connection() -> psycopg.Connection[tuple[object, ...]]:
    try:
        return psycopg.connect(POSTGRES_ADMIN_URL, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as err:
        pytest.fail(
            f"PostgreSQL is not reachable at {POSTGRES_ADMIN_URL} ({err}); start it: "
            f"{START_POSTGRES}",
            pytrace=False,
        )


def create_database() -> tuple[str, str]:
    """A fresh database for this test run; returns (name, SQLAlchemy URL)."""
    name = f"compaction_test_{uuid.uuid4().hex[:10]}"
    with admin_connection() as conn:
        conn.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
    base = POSTGRES_ADMIN_URL.rsplit("/", 1)[0]
    return name, f"{base}/{name}"


def drop_database(name: str) -> None:
    with admin_connection() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')  # type: ignore[arg-type]


def free_port() -> int:
    """A TCP port on the loopback that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PrivateRedis:
    """A redis-server of the test's own on a free port, that a test may stop and restart,
    empty each time (real services; the machine's shared Redis is never restarted)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                redis.Redis(port=self.port, socket_connect_timeout=0.2).ping()
                return
            except redis.ConnectionError:
                time.sleep(0.05)
        pytest.fail(f"redis-server did not start on port {self.port}", pytrace=False)

    def stop(self) -> int:
        """Its exit status (0: it shut down cleanly); 0 when it was not running."""
        if self.process is None:
            return 0
        self.process.terminate()
        status = self.process.wait(timeout=10)
        self.process = None
        return status

    def restart(self) -> None:
        self.stop()
        self.start()


@dataclass(frozen=True)
class RedisNamespace:
    """A random key prefix and queue name on a Redis server: what the service writes under them
    is this namespace's alone, so concurrent test runs never see each other's keys. ``clear``
    deletes only those keys (never ``FLUSHDB``: the Redis is shared)."""

    prefix: str
    queue: str
    url: str = REDIS_URL

    @classmethod
    def fresh(cls, url: str = REDIS_URL) -> RedisNamespace:
        tag = f"test-{uuid.uuid4().hex[:12]}"
        return cls(prefix=tag, queue=tag, url=url)

    def on(self, url: str) -> RedisNamespace:
        """The same names on another server (a ``PrivateRedis``)."""
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
        client = redis.Redis.from_url(self.url, **options)
        try:
            client.ping()
        except redis.ConnectionError as err:
            pytest.fail(
                f"Redis is not reachable at {self.url} ({err}); start it: redis-server",
                pytrace=False,
            )
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
def fresh_namespace(url: str = REDIS_URL) -> Iterator[RedisNamespace]:
    """A new namespace on the Redis at ``url``, cleared when the block ends."""
    namespace = RedisNamespace.fresh(url)
    client = namespace.client()
    try:
        yield namespace
    finally:
        namespace.clear(client)
        client.close()
