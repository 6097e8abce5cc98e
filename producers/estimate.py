"""Incremental token estimates for the threshold check: it runs before every model call, so an
unchanged session must cost almost nothing (docs/architecture.md, "Settings").

Two ways in: the gateway passes the messages it is about to send (the estimate reuses the
longest prefix of the same message objects it saw last time), or it lets the store be read
(the estimate reuses the tokens of the rows it counted before and reads only newer rows; a
compaction or restore bumps the session's version, which starts the count again).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

from compaction.messages import Message
from compaction.tokens import TextEstimator, estimate_tokens

MAX_SESSIONS = 10_000


@dataclass
class _Listed:
    messages: list[Message] = field(default_factory=list)
    running: list[int] = field(default_factory=list)  # cumulative tokens


@dataclass
class _Stored:
    version: int = -1
    last_seq: int = 0
    tokens: int = 0


class SessionEstimates:
    """Per-session caches, least recently used evicted past ``MAX_SESSIONS``."""

    def __init__(self) -> None:
        self._listed: OrderedDict[str, _Listed] = OrderedDict()
        self._stored: OrderedDict[str, _Stored] = OrderedDict()
        self._lock = threading.Lock()

    def of_messages(
        self, session_id: str, messages: Sequence[Message], estimate: TextEstimator
    ) -> int:
        with self._lock:
            cached = self._listed.pop(session_id, None) or _Listed()
        same = 0
        limit = min(len(messages), len(cached.messages))
        while same < limit and messages[same] is cached.messages[same]:
            same += 1
        running = cached.running[:same]
        total = running[-1] if running else 0
        for message in messages[same:]:
            total += estimate_tokens(message, estimate)
            running.append(total)
        with self._lock:
            self._listed[session_id] = _Listed(list(messages), running)
            _trim(self._listed)
        return total

    def stored(self, session_id: str) -> tuple[int, int, int]:
        """(version, last_seq, tokens) counted last time, or version -1."""
        with self._lock:
            entry = self._stored.get(session_id) or _Stored()
        return entry.version, entry.last_seq, entry.tokens

    def remember(self, session_id: str, version: int, last_seq: int, tokens: int) -> None:
        with self._lock:
            self._stored.pop(session_id, None)
            self._stored[session_id] = _Stored(version, last_seq, tokens)
            _trim(self._stored)


def _trim(cache: OrderedDict[str, _Listed] | OrderedDict[str, _Stored]) -> None:
    while len(cache) > MAX_SESSIONS:
        cache.popitem(last=False)
