"""Redis clients, with the options every part of the service uses (one home for them)."""

from __future__ import annotations

import redis
import redis.asyncio as aioredis


def redis_client(url: str) -> redis.Redis:
    """For commands: short socket timeouts, so a dead Redis fails a call quickly instead of
    hanging a job or a gateway's turn."""
    return redis.Redis.from_url(
        url, socket_timeout=10, socket_connect_timeout=5, health_check_interval=30
    )


def stream_client(url: str) -> redis.Redis:
    """For blocking reads (``XREAD``, ``XREADGROUP``): no socket timeout, since a blocked read
    is not a dead connection."""
    return redis.Redis.from_url(url, socket_timeout=None, socket_connect_timeout=5)


def async_stream_client(url: str) -> aioredis.Redis:
    """``stream_client`` for asyncio gateways."""
    return aioredis.Redis.from_url(url, socket_timeout=None, socket_connect_timeout=5)


def text(value: bytes | str) -> str:
    """Redis answers bytes unless told otherwise."""
    return value.decode() if isinstance(value, bytes) else value
