"""The standing compactions a ``token_update`` reports (the UI's "compacted N times"), read once
per session version: only a compaction and a restore change them, and both bump the session's
``compaction_version`` (store/compactions.py, store/runs.py), so a turn on an unchanged session
reads no run rows (docs/benchmarks.md, "Overheads")."""

from __future__ import annotations

import threading

from cachetools import LRUCache

from compaction.store import SessionInfo, Store

MAX_SESSIONS = 10_000


class StandingCounts:
    """Per-session ``(version, count)``, least recently used evicted past ``MAX_SESSIONS``."""

    def __init__(self) -> None:
        self._counts: LRUCache[str, tuple[int, int]] = LRUCache(MAX_SESSIONS)
        self._lock = threading.Lock()

    def of(self, store: Store, info: SessionInfo) -> int:
        """``store.compaction_counts`` for the session at ``info``'s version. Read after
        ``info``: a compaction committed in between is counted under the older version, which
        a later row (with the newer one) reads again."""
        with self._lock:
            hit = self._counts.get(info.id)
        if hit is not None and hit[0] == info.compaction_version:
            return hit[1]
        count = store.compaction_counts([info.id]).get(info.id, 0)
        with self._lock:
            self._counts[info.id] = (info.compaction_version, count)
        return count
