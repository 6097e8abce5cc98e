"""The per-session Redis lock (docs/architecture.md, "The job").

redis-py's ``Lock``: an auto request does not wait (a held lock means ``compaction_skipped``), a
manual one waits for the holder up to ``COMPACTION_MANUAL_LOCK_WAIT_S``. Not thread-local,
so the heartbeat thread renews the same token while the job waits on the LLM. The token names
the request that holds the lock (``service.keys.lock_token``), so a gateway waiting on the
session can tell which request runs. The TTL is short, for quick recovery when a worker dies;
renewal keeps it alive while the holder works. A renewal that finds the lock gone marks it
lost, and the job then writes nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import redis
from redis.lock import Lock

from compaction.core.errors import LockLost
from compaction.service import logs
from compaction.service.keys import lock_key, lock_token

log = logs.get_logger(__name__)


class SessionLock:
    def __init__(
        self,
        client: redis.Redis,
        session_id: str,
        *,
        ttl_s: float,
        prefix: str = "compaction",
        owner: str = "",
    ) -> None:
        self.key = lock_key(prefix, session_id)
        self.ttl_s = max(0.001, ttl_s)
        self.token = lock_token(owner)
        self.lost = threading.Event()
        self._lock = Lock(client, self.key, timeout=self.ttl_s, blocking=False, thread_local=False)

    def acquire(self, wait_s: float = 0) -> bool:
        """Take the lock, waiting up to ``wait_s`` for its holder to release it."""
        return bool(
            self._lock.acquire(token=self.token, blocking=wait_s > 0, blocking_timeout=wait_s)
        )

    def renew(self) -> bool:
        """Reset the TTL if this lock still holds the key; mark it lost otherwise."""
        try:
            self._lock.reacquire()
            return True
        except redis.exceptions.LockError as err:
            log.warning("lock lost", key=self.key, error=str(err))
        except redis.RedisError as err:
            log.warning("lock renewal failed", key=self.key, error=str(err))
        self.lost.set()
        return False

    def release(self) -> bool:
        try:
            self._lock.release()
            return True
        except redis.RedisError:  # not ours any more, or Redis is away: it expires on its own
            return False

    def check(self) -> None:
        """Raise ``LockLost`` when the lock was lost: call before writing anything."""
        if self.lost.is_set() or not self.renew():
            raise LockLost(f"the lock {self.key} expired or was taken over; nothing written")


@contextmanager
def heartbeat(lock: SessionLock) -> Iterator[SessionLock]:
    """Renew ``lock`` every third of its TTL until the block ends, then release it."""
    stop = threading.Event()
    interval = lock.ttl_s / 3

    def beat() -> None:
        while not stop.wait(interval):
            if not lock.renew():
                return

    thread = threading.Thread(target=beat, name=f"heartbeat {lock.key}", daemon=True)
    thread.start()
    try:
        yield lock
    finally:
        stop.set()
        thread.join(timeout=interval + 1)
        lock.release()
