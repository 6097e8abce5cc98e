"""Helpers of the tests that run real worker processes (``test_worker_process.py``,
``test_worker_metrics.py``; their fixtures are in ``conftest.py``): a Redis server and the
test's names on it, the workers and private redis-servers a test starts, and readers of the
events those workers publish."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest
import redis
from rq import Worker

from compaction.core.contract import FINAL_EVENTS, CompactionRequested
from compaction.service.keys import events_stream
from compaction.service.queue import compaction_queue, enqueue
from compaction.store import Store
from compaction.store.records import StoredMessage
from tests.fakes import conversation
from tests.integration.worker_helpers import wait_until
from tests.processes import COMPACTION, child_env, start, stop
from tests.services import PrivateRedis, RedisNamespace, stream_entries

#: small enough for conversation(12) (~2,000 tokens) to be over the threshold
WINDOW = 4_000
T = TypeVar("T")


@dataclass(frozen=True)
class Server:
    """A Redis server's client and the test's names on it."""

    client: redis.Redis
    names: RedisNamespace

    @classmethod
    def private(cls, names: RedisNamespace, server: PrivateRedis) -> Server:
        names = names.on(server.url)
        return cls(redis.Redis.from_url(names.url, socket_timeout=5), names)

    def key(self, name: Callable[[str, str], str], session_id: str) -> str:
        """A per-session key: ``server.key(lock_key, session_id)``."""
        return name(self.names.prefix, session_id)


@dataclass
class Proc:
    popen: subprocess.Popen[bytes]
    log: Path

    @property
    def pid(self) -> int:
        return self.popen.pid

    def tail(self, lines: int = 30) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


@dataclass
class Processes:
    """Starts workers (``tests/processes.py``) and private redis-servers; ``close()`` stops
    the workers, then the servers they talk to (a worker whose Redis went first logs a
    traceback on the way out)."""

    tmp: Path
    env: dict[str, str]
    started: list[Proc] = field(default_factory=list)
    servers: list[PrivateRedis] = field(default_factory=list)

    def worker(self, *args: str, env: dict[str, str] | None = None, **settings: str) -> Proc:
        """``compaction worker ARGS``; ``settings`` by name (``lock_ttl_s="2"``)."""
        return self.command("worker", *args, env=env, **settings)

    def command(
        self, name: str, *args: str, env: dict[str, str] | None = None, **settings: str
    ) -> Proc:
        """``compaction NAME ARGS`` (``worker``, ``ingress``) with the test's settings."""
        merged = {
            **(env or self.env),
            **{f"COMPACTION_{k.upper()}": v for k, v in settings.items()},
        }
        log = self.tmp / f"{name}-{len(self.started)}.log"
        proc = Proc(start([str(COMPACTION), name, *args], merged, log), log)
        self.started.append(proc)
        return proc

    def redis_server(self) -> PrivateRedis:
        server = PrivateRedis()
        server.start()
        self.servers.append(server)
        return server

    def close(self) -> None:
        for proc in reversed(self.started):
            stop(proc.popen, timeout=5)
        for server in self.servers:
            server.stop()


def worker_env(database_url: str, names: RedisNamespace) -> dict[str, str]:
    return child_env(
        **names.env(),
        COMPACTION_DATABASE_URL=database_url,
        COMPACTION_CONTEXT_WINDOW=str(WINDOW),
        COMPACTION_LLM_MAX_RETRIES="0",
        COMPACTION_LLM_TIMEOUT_S="20",
        COMPACTION_JOB_TIMEOUT_S="30",
        PYTHONUNBUFFERED="1",
    )


def wait_for(
    check: Callable[[], T | None], timeout: float, what: str, proc: Proc | None = None
) -> T:
    """``wait_until``, with the worker's log when it fails, and failing at once when the
    watched process dies first."""

    def step() -> T | None:
        value = check()
        if not value and proc is not None and proc.popen.poll() is not None:
            pytest.fail(
                f"{what}: the process exited ({proc.popen.returncode}) first:\n{proc.tail()}"
            )
        return value

    return wait_until(step, what, timeout, proc.tail if proc is not None else str)


def events_for(server: Server, request_id: str) -> list[dict[str, Any]]:
    out = []
    for _id, entry in stream_entries(server.client, events_stream(server.names.prefix)):
        event = json.loads(entry[b"event"])
        if event.get("requestId") == request_id:
            out.append(event)
    return out


def final_event(
    server: Server, request_id: str, proc: Proc | None = None, timeout: float = 30.0
) -> dict[str, Any]:
    def final() -> dict[str, Any] | None:
        return next((e for e in events_for(server, request_id) if e["type"] in FINAL_EVENTS), None)

    return wait_for(final, timeout, f"the final event of request {request_id}", proc)


def new_session(store: Store, turns: int = 12) -> str:
    session_id = store.create_session()
    store.append_messages(session_id, conversation(turns))
    return session_id


def request(server: Server, session_id: str, timeout_s: int = 30) -> CompactionRequested:
    req = CompactionRequested(session_id=session_id, reason="manual")
    enqueue(compaction_queue(server.client, server.names.queue), req, timeout_s=timeout_s)
    return req


def conversation_rows(view: list[StoredMessage]) -> list[StoredMessage]:
    return [row for row in view if not row.is_event]


def wait_idle(client: redis.Redis, proc: Proc) -> None:
    """Until RQ has finished its bookkeeping of the last job and waits for the next."""

    def idle() -> bool:
        workers = Worker.all(connection=client)
        return bool(workers) and all(w.get_state() == "idle" for w in workers)

    wait_for(idle, 10, "the worker back to idle", proc)
    time.sleep(0.2)  # from "idle" to blocking on the queue
