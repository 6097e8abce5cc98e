"""Worker processes, for the worker benchmarks and the tests that run real processes (one home):
the environment a child gets (its settings and nothing of the caller's), starting one in a
process group of its own, stopping the whole group; for the benchmarks, waiting until workers
have registered and reading the final events off the event stream.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path
from typing import cast

import redis
from rq import Queue, Worker

from benchmarks.namespace import RedisNamespace
from compaction.core.contract import is_final, parse_event
from compaction.service.keys import events_stream

ROOT = Path(__file__).resolve().parent.parent
#: the shared Redis: each benchmark works in a namespace of its own on it (``namespace.py``)
REDIS_URL = os.environ.get("COMPACTION_BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")
COMPACTION = Path(sys.executable).parent / "compaction"


def child_env(**settings: str) -> dict[str, str]:
    """This environment less its ``COMPACTION_`` variables, plus ``settings``: a child runs with
    the settings it is given, never the caller's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPACTION_")}
    env.update(settings)
    return env


def worker_env(database_url: str, namespace: RedisNamespace, **extra: str) -> dict[str, str]:
    """A benchmark worker's: the benchmark's database and its namespace on the shared Redis."""
    return child_env(COMPACTION_DATABASE_URL=database_url, **namespace.env(), **extra)


def start(argv: list[str], env: dict[str, str], log: Path | None = None) -> subprocess.Popen[bytes]:
    """``argv`` in a process group of its own (a pool's children die with it), its output in
    ``log`` (or nowhere)."""
    with open(log or os.devnull, "wb") as out:
        return subprocess.Popen(
            argv,
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def stop(process: subprocess.Popen[bytes], sig: int = signal.SIGTERM, timeout: float = 15.0) -> int:
    """Signal the process group; SIGKILL it when it outlives ``timeout``, then whatever of the
    group is left (a pool's children). Returns the process's exit status."""
    if process.poll() is None:
        _killpg(process.pid, sig)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            _killpg(process.pid, signal.SIGKILL)
            process.wait(10)
    _killpg(process.pid, signal.SIGKILL)
    return process.returncode


def _killpg(pgid: int, sig: int) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


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
