"""What the gateway's handlers use, built once at start-up and passed in (docs/architecture.md,
"Layers"): the settings, the producers (store, Redis, caches), the event hub, the chat model,
and the gateway's own options. Handlers read it from ``request.app.state.resources``."""

from __future__ import annotations

from dataclasses import dataclass, field

import redis.asyncio as aioredis
from pydantic import SecretStr

from producers.context import Producers
from service.settings import Settings

#: request bodies past this are refused with 413 (an imported transcript is the largest)
MAX_BODY_BYTES = 16 * 1024 * 1024


@dataclass
class GatewayOptions:
    """``COMPACTION_GATEWAY_TOKEN`` and friends; ``token=None`` means 127.0.0.1 only."""

    token: SecretStr | None = None
    cors_origins: tuple[str, ...] = ()
    max_body_bytes: int = MAX_BODY_BYTES


@dataclass
class Resources:
    settings: Settings
    producers: Producers
    #: the client the event hub reads the stream with (blocking ``XREAD``); built from the
    #: settings when absent; the embedded mode passes a fakeredis one sharing its server
    events_redis: aioredis.Redis | None = None
    options: GatewayOptions = field(default_factory=GatewayOptions)
