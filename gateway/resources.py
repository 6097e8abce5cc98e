"""What the gateway's handlers use, built once at start-up and passed in (docs/architecture.md,
"Layers"): the settings, the producers (store, Redis, caches), the event hub, the chat model,
and the gateway's own options. Handlers read it from ``request.app.state.resources``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import redis.asyncio as aioredis
from pydantic import SecretStr

from compaction.gateway.chat import Turns
from compaction.gateway.chat_model import ChatModel, ChatModels
from compaction.gateway.hub import Hub
from compaction.producers.context import Producers
from compaction.service.settings import Settings

#: request bodies past this are refused with 413 (an imported transcript is the largest)
MAX_BODY_BYTES = 16 * 1024 * 1024


@dataclass
class GatewayOptions:
    """``COMPACTION_GATEWAY_TOKEN`` and friends; ``token=None`` means 127.0.0.1 only, and only
    loopback ``Host`` names (``gateway.browsers``)."""

    token: SecretStr | None = None
    cors_origins: tuple[str, ...] = ()
    #: page origins that may open sockets and send anything but GET (its own always may)
    allowed_origins: tuple[str, ...] = ()
    #: ``Host`` names answered besides the loopback ones; empty with a token: any
    allowed_hosts: tuple[str, ...] = ()
    max_body_bytes: int = MAX_BODY_BYTES

    @classmethod
    def from_settings(cls, settings: Settings) -> GatewayOptions:
        return cls(
            token=settings.gateway_token,
            cors_origins=tuple(settings.gateway_cors_origins),
            allowed_origins=tuple(settings.gateway_allowed_origins),
            allowed_hosts=tuple(settings.gateway_allowed_hosts),
        )

    @property
    def any_host(self) -> bool:
        """With a token and no list, any ``Host`` (a load balancer's name, as before)."""
        return self.token is not None and not self.allowed_hosts

    @property
    def trusted_origins(self) -> tuple[str, ...]:
        return self.allowed_origins + self.cors_origins


@dataclass
class Resources:
    settings: Settings
    producers: Producers
    #: the client the event hub reads the stream with (blocking ``XREAD``); built from the
    #: settings when absent; the embedded mode passes a fakeredis one sharing its server
    events_redis: aioredis.Redis | None = None
    options: GatewayOptions = field(default_factory=GatewayOptions)
    #: who answers a turn when no channel serves the session's model (the embedded mode's
    #: offline model); ``None``: such a turn is ``no_chat_model``
    chat_fallback: ChatModel | None = None
    #: the events stream's one reader in this process, fanning out to the sockets
    hub: Hub = field(init=False)
    #: the conversation turns (``POST /api/sessions/{id}/messages`` and the sockets' messages)
    turns: Turns = field(init=False)

    def __post_init__(self) -> None:
        ctx = self.producers
        self.hub = Hub(ctx.settings, self.events_redis)
        self.turns = Turns(ctx, self.hub, ChatModels(ctx.settings, ctx.store, self.chat_fallback))

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """While the app serves (its lifespan): the hub reads the stream; on the way out the
        turns still running are cancelled and the sockets' subscriptions ended."""
        await self.hub.start()
        try:
            yield
        finally:
            await self.turns.stop()
            await self.hub.stop()
