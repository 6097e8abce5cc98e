"""Worker processes for the benchmarks, over the suite's child processes (``tests/processes.py``:
a child's environment, starting and stopping its process group): a benchmark worker's
environment, waiting until workers have registered, reading the final events off the event
stream.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from typing import cast

import redis
from rq import Queue, Worker

from compaction.core.contract import is_final, parse_event
from compaction.service.keys import events_stream
from tests.namespace import RedisNamespace
from tests.processes import child_env

#: the shared Redis: each benchmark works in a namespace of its own on it (``namespace.py``)
REDIS_URL = os.environ.get("COMPACTION_BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")


def worker_env(database_url: str, namespace: RedisNamespace, **extra: str) -> dict[str, str]:
    """A benchmark worker's: the benchmark's database and its namespace on the shared Redis."""
    return child_env(COMPACTION_DATABASE_URL=database_url, **namespace.env(), **extra)


def wait_for_workers(
    client: redis.Redis, queue: str, count: int, process: subprocess.Popen[bytes]
) -> None:
    """Until ``count`` workers listen to ``queue`` (others may share the server)."""
    deadline = time.monotonic() + 120
    while Worker.count(queue=Queue(queue, connection=client)) < count:
        if process.poll() is not None:
            raise RuntimeError(f"the worker exited ({process.returncode}) before starting")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{count} workers did not register within 120 s")
        time.sleep(0.05)
    time.sleep(0.3)  # registered a moment before they block on the queue


Entry = tuple[bytes, dict[bytes, bytes]]  # a stream entry: its id, its fields


class Events:
    """Reads the event stream from where it was when built; final events by request id, with
    the wall-clock time each was read."""

    def __init__(self, client: redis.Redis, prefix: str) -> None:
        self.client = client
        self.stream = events_stream(prefix)
        last = cast(list[Entry], client.xrevrange(self.stream, count=1))
        self.last_id = last[0][0] if last else b"0-0"
        self.final: dict[str, tuple[str, float]] = {}

    def wait(self, request_ids: set[str], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not request_ids <= self.final.keys():
            if time.monotonic() > deadline:
                missing = len(request_ids - self.final.keys())
                raise RuntimeError(f"{missing} jobs did not finish within {timeout:g} s")
            reply = cast(
                list[tuple[bytes, list[Entry]]],
                self.client.xread({self.stream: self.last_id}, block=1_000, count=1_000),
            )
            now = time.time()
            for _stream, entries in reply:
                for entry_id, fields in entries:
                    self.last_id = entry_id
                    event = json.loads(fields[b"event"])
                    if is_final(parse_event(event)):
                        self.final[event.get("requestId", "")] = (event["type"], now)
