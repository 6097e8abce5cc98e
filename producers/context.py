"""The resources the producers use, passed in (DESIGN §2): settings, the store, Redis. A gateway
builds one ``Producers`` at start-up; the module-level functions of ``producers`` use a default
one built from the settings on first use (or the one given to ``producers.configure``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import redis

from compaction.tokens import TextEstimator
from producers.estimate import SessionEstimates
from store import Store, make_sessionmaker
from worker.settings import Settings


@dataclass
class Producers:
    settings: Settings
    store: Store
    redis: redis.Redis
    estimates: SessionEstimates = field(default_factory=SessionEstimates)
    #: built once: the threshold check runs before every model call
    estimator: TextEstimator = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.estimator = self.settings.compaction_config().estimator()

    @classmethod
    def from_settings(cls, settings: Settings | None = None) -> Producers:
        settings = settings or Settings()
        client = redis.Redis.from_url(
            settings.redis_url,
            socket_timeout=10,
            socket_connect_timeout=5,
            health_check_interval=30,
        )
        return cls(
            settings=settings, store=Store(make_sessionmaker(settings.database_url)), redis=client
        )


def text(value: bytes | str) -> str:
    """Redis answers bytes unless told otherwise."""
    return value.decode() if isinstance(value, bytes) else value


_default: Producers | None = None


def configure(producers: Producers | None) -> None:
    global _default
    _default = producers


def default() -> Producers:
    global _default
    if _default is None:
        _default = Producers.from_settings()
    return _default
