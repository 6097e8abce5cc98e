"""The user's model usage, as the gateway last reported it (docs/architecture.md, "Events").

``token_update.current`` is the chat model's usage (the seed's context bar), not the auxiliary
model's: the gateway reports it with ``publish_token_update(usage=...)``, which keeps it here,
and the worker's own ``token_update`` after a compaction repeats it.
"""

from __future__ import annotations

import redis
from pydantic import ValidationError

from compaction.core.contract import TokenUsage
from compaction.service.keys import usage_key

#: a session idle this long has no "current" usage any more
USAGE_TTL_S = 86_400


def remember_usage(client: redis.Redis, prefix: str, session_id: str, usage: TokenUsage) -> None:
    client.set(usage_key(prefix, session_id), usage.model_dump_json(by_alias=True), ex=USAGE_TTL_S)


def last_usage(client: redis.Redis, prefix: str, session_id: str) -> TokenUsage:
    """The usage last remembered for the session; zeros when none (or unreadable: whoever
    writes to Redis is not trusted)."""
    raw = client.get(usage_key(prefix, session_id))
    if raw is None:
        return TokenUsage()
    try:
        return TokenUsage.model_validate_json(raw)
    except ValidationError:
        return TokenUsage()
