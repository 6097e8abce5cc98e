"""The resources the producers use, passed in (docs/architecture.md, "Layers"): settings, the
store, Redis, and the per-instance caches (token estimates, session contexts). A gateway
builds one ``Producers`` at start-up; the module-level functions of ``producers`` use a default
one built from the settings on first use (or the one given to ``producers.configure``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import redis

from compaction.core.tokens import TextEstimator
from compaction.producers.estimate import SessionEstimates
from compaction.service.context import SessionContexts
from compaction.service.defaults import Default
from compaction.service.redis import redis_client
from compaction.service.settings import Settings
from compaction.store import Store, make_sessionmaker


@dataclass
class Producers:
    settings: Settings
    store: Store
    redis: redis.Redis
    estimates: SessionEstimates = field(default_factory=SessionEstimates)
    #: built once: the threshold check runs before every model call
    estimator: TextEstimator = field(init=False, repr=False)
    contexts: SessionContexts = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.estimator = self.settings.compaction_config().estimator()
        self.contexts = SessionContexts(self.store, self.settings)

    @classmethod
    def from_settings(cls, settings: Settings | None = None) -> Producers:
        settings = settings or Settings()
        return cls(
            settings=settings,
            store=Store(make_sessionmaker(settings.database_url)),
            redis=redis_client(settings.redis_url),
        )


_DEFAULT: Default[Producers] = Default(Producers.from_settings)
#: install the ``Producers`` the module-level functions use (``None``: build from the settings)
configure = _DEFAULT.set
#: the ``Producers`` the module-level functions use
default = _DEFAULT.get
