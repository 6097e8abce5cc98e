"""Incremental token estimates for the threshold check: it runs before every model call, so an
unchanged session must cost almost nothing (docs/architecture.md, "Settings").

Two ways in: the gateway passes the messages it is about to send (the estimate reuses the
longest prefix of the same message objects it saw last time), or it lets the store be read
(the estimate reuses the tokens of the rows it counted before and reads only newer rows; a
compaction or restore bumps the session's version, which starts the count again). Either way the
leading system messages (the system prompt) are counted apart too: a prompt alone over the
threshold can never be compacted away.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from compaction.core.messages import Message
from compaction.core.tokens import TextEstimator, estimate_tokens
from compaction.store.records import SessionInfo, StoredMessage

MAX_SESSIONS = 10_000


@dataclass
class _Listed:
    messages: list[Message] = field(default_factory=list)
    running: list[int] = field(default_factory=list)  # cumulative tokens


@dataclass(frozen=True, slots=True)
class _Stored:
    version: int = -1
    last_seq: int = 0
    tokens: int = 0
    #: tokens of the leading system rows; final once a row of another role was counted
    system: int = 0
    past_system: bool = False

    def counted(
        self, rows: Sequence[StoredMessage], last_seq: int, estimate: TextEstimator
    ) -> _Stored:
        tokens, system, past_system = self.tokens, self.system, self.past_system
        for row in rows:
            count = estimate_tokens(row.message, estimate)
            tokens += count
            if not past_system and row.message.role == "system":
                system += count
            else:
                past_system = True
        # A row appended between reading the session and its rows is counted once only.
        last = max(last_seq, rows[-1].seq) if rows else last_seq
        return _Stored(self.version, last, tokens, system, past_system)


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

    def of_store(
        self,
        session_id: str,
        version: int,
        last_seq: int,
        newer: Callable[[int], Sequence[StoredMessage]],
        estimate: TextEstimator,
    ) -> tuple[int, int]:
        """(tokens, tokens of the leading system rows) of the session's compacted view at
        ``version`` holding rows up to ``last_seq``; ``newer(seq)`` reads the rows after
        ``seq``, called only when some are not counted yet."""
        with self._lock:
            entry = self._stored.get(session_id)
        if entry is None or entry.version != version:
            entry = _Stored(version)
        if last_seq > entry.last_seq:
            entry = entry.counted(newer(entry.last_seq), last_seq, estimate)
            with self._lock:
                self._stored.pop(session_id, None)
                self._stored[session_id] = entry
                _trim(self._stored)
        return entry.tokens, entry.system

    def appended(
        self, info: SessionInfo, rows: Sequence[StoredMessage], estimate: TextEstimator
    ) -> None:
        """Count ``rows``, which the caller just appended, ``info`` the session's row as that
        append left it: when the count holds every row before them at that version, the next
        ``of_store`` reads none (a chat turn, docs/benchmarks.md, "Overheads"); otherwise it
        reads them, as before."""
        with self._lock:
            entry = self._stored.get(info.id)
        if (
            not rows
            or entry is None
            or entry.version != info.compaction_version
            or rows[0].seq != entry.last_seq + 1
            or rows[-1].seq != info.last_seq
            or len(rows) != info.last_seq - entry.last_seq
        ):
            return
        counted = entry.counted(rows, info.last_seq, estimate)
        with self._lock:
            if self._stored.get(info.id) is entry:  # no count moved on meanwhile
                self._stored[info.id] = counted

    def forget(self, session_id: str) -> None:
        """The next count of the session starts again from its first row."""
        with self._lock:
            self._listed.pop(session_id, None)
            self._stored.pop(session_id, None)


def _trim(cache: OrderedDict[str, _Listed] | OrderedDict[str, _Stored]) -> None:
    while len(cache) > MAX_SESSIONS:
        cache.popitem(last=False)
