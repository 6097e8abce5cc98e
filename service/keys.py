"""Names other programs rely on (docs/architecture.md, "Redis keys"): the queue, the job's
import path, every Redis key, and the lock token's format. One home: the worker, the producers
and the ingress all build their names here; the prefix is a setting (``compaction``).
"""

from __future__ import annotations

import hashlib
import json
import uuid

from compaction.core.contract import Reason

QUEUE = "compaction"
JOB_FUNCTION = "compaction.worker.jobs.compaction_requested"
#: the job's names that a worker runs: the one producers write, and the name 0.1.x producers
#: wrote (before the one-namespace rename, CHANGELOG.md 0.2.0), so requests queued before a
#: rolling upgrade still run; the name is only compared, never imported
JOB_FUNCTIONS = frozenset({JOB_FUNCTION, "worker.jobs.compaction_requested"})


def lock_key(prefix: str, session_id: str) -> str:
    return f"{prefix}:lock:{session_id}"


def pending_key(prefix: str, session_id: str) -> str:
    return f"{prefix}:pending:{session_id}"


def running_key(prefix: str, session_id: str) -> str:
    return f"{prefix}:running:{session_id}"


def running_index(prefix: str) -> str:
    """The sessions that may hold a running record: what the workers' watch reads
    (docs/architecture.md, "A worker that dies")."""
    return f"{prefix}:running"


def upgrade_key(prefix: str, session_id: str) -> str:
    """A ``/compact`` waiting for the queued auto request it upgraded (docs/architecture.md,
    "The job"): a hash, ``for`` (the queued request's id) and ``request`` (the manual request's
    JSON payload)."""
    return f"{prefix}:upgrade:{session_id}"


# The pending key's value tells the queued request's reason, so that a ``/compact`` can upgrade
# a queued auto request: ``"<reason>:<request id>"``. The reason never holds ":", so it goes
# first and the value is split on its first ":" (as the lock token).
def pending_value(reason: Reason, request_id: str) -> str:
    return f"{reason}:{request_id}"


def pending_parts(value: str) -> tuple[Reason, str]:
    """(reason, request id) of a pending key's value. A value naming no reason (anyone able to
    write to Redis may have written it) is taken as a manual request's id: never upgraded."""
    reason, sep, request_id = value.partition(":")
    if sep and reason == "auto":
        return "auto", request_id
    if sep and reason == "manual":
        return "manual", request_id
    return "manual", value


def usage_key(prefix: str, session_id: str) -> str:
    """The user's model usage last reported by the gateway (``token_update.current``)."""
    return f"{prefix}:usage:{session_id}"


def turn_key(prefix: str, session_id: str) -> str:
    """Held by the gateway process running a turn of the session (docs/architecture.md, "The
    gateway"): one turn of a session at a time, whichever gateway takes it."""
    return f"{prefix}:turn:{session_id}"


def messages_stream(prefix: str) -> str:
    """The history rows the gateways store, for every gateway's sockets (docs/architecture.md,
    "The gateway")."""
    return f"{prefix}:messages:stream"


def events_channel(prefix: str) -> str:
    return f"{prefix}:events"


def events_stream(prefix: str) -> str:
    return f"{prefix}:events:stream"


def requests_stream(prefix: str) -> str:
    return f"{prefix}:requests"


def dead_stream(prefix: str) -> str:
    return f"{requests_stream(prefix)}:dead"


def job_id(session_id: str, request_id: str) -> str:
    """``compaction-<32 hex>``, a digest of both ids: one job per session and request (two
    sessions' requests may share an id), in the characters RQ allows whatever the ids hold."""
    both = json.dumps([session_id, request_id]).encode()  # ASCII escapes: any str encodes
    return f"compaction-{hashlib.sha256(both).hexdigest()[:32]}"


# The lock's value names the request that holds it, so a gateway waiting on the session can
# tell which request runs. Request ids may hold ":", so the random part goes first (it never
# does) and the token is split on the first ":" only.
def lock_token(request_id: str) -> str:
    """A fresh token for a lock held by ``request_id``: ``"<random hex>:<request id>"``."""
    return f"{uuid.uuid4().hex}:{request_id}"


def token_request(token: str) -> str:
    """The request id inside a lock token (``"unknown"`` when the token names none)."""
    _random, _sep, request_id = token.partition(":")
    return request_id or "unknown"
