"""What the gateway's handlers use, built once at start-up and passed in (docs/architecture.md,
"Layers"): the settings, the producers (store, Redis, caches), the event hub, the chat model,
and the gateway's own options. Handlers read it from ``request.app.state.resources``."""

from __future__ import annotations

from dataclasses import dataclass, field

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
    options: GatewayOptions = field(default_factory=GatewayOptions)
