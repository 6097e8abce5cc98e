"""The per-session Redis lock (DESIGN §1, §7).

Non-blocking (a held lock means ``compaction_skipped``), owned by a random token rather than a
thread, so the heartbeat thread can renew it while the job waits on the LLM. The TTL is short,
for quick recovery when a worker dies; renewal keeps it alive while the holder works. A renewal
that finds the lock gone marks it lost, and the job then writes nothing.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import redis

from compaction.contract import lock_key
from compaction.errors import LockLost

log = logging.getLogger(__name__)

# Compare-and-act on the token: only the holder may renew or release.
_RENEW = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0
"""
_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0
"""


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
        self.client = client
        self.key = lock_key(prefix, session_id)
        self.ttl_ms = max(1, int(ttl_s * 1000))
        # "<request id>:<random>": a gateway waiting on the session can tell which request runs.
        self.token = f"{owner}:{uuid.uuid4().hex}"
        self.lost = threading.Event()
        self._renew = client.register_script(_RENEW)
        self._release = client.register_script(_RELEASE)

    def acquire(self) -> bool:
        return bool(self.client.set(self.key, self.token, nx=True, px=self.ttl_ms))

    def renew(self) -> bool:
        try:
            ok = bool(self._renew(keys=[self.key], args=[self.token, self.ttl_ms]))
        except redis.RedisError as err:
            log.warning("lock renewal failed", extra={"key": self.key, "error": str(err)})
            ok = False
        if not ok:
            self.lost.set()
        return ok

    def release(self) -> bool:
        try:
            return bool(self._release(keys=[self.key], args=[self.token]))
        except redis.RedisError:
            return False  # it expires on its own

    def check(self) -> None:
        """Raise ``LockLost`` when the lock was lost: call before writing anything."""
        if self.lost.is_set() or not self.renew():
            raise LockLost(f"the lock {self.key} expired or was taken over; nothing written")


@contextmanager
def heartbeat(lock: SessionLock) -> Iterator[SessionLock]:
    """Renew ``lock`` every third of its TTL until the block ends, then release it."""
    stop = threading.Event()
    interval = lock.ttl_ms / 3000

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
