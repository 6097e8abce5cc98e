"""The resources the producers use, passed in (DESIGN §2): settings, the store, Redis. A gateway
builds one ``Producers`` at start-up; the module-level functions of ``producers`` use a default
one built from the settings on first use (or the one given to ``producers.configure``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import redis

from compaction.tokens import TextEstimator
from producers.estimate import SessionEstimates
from service.redis import redis_client
from service.settings import Settings
from store import Store, make_sessionmaker


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
        return cls(
            settings=settings,
            store=Store(make_sessionmaker(settings.database_url)),
            redis=redis_client(settings.redis_url),
        )


_default: Producers | None = None


def configure(producers: Producers | None) -> None:
    global _default
    _default = producers


def default() -> Producers:
    global _default
    if _default is None:
        _default = Producers.from_settings()
    return _default
