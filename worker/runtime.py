"""What a job needs, built once per process and injected (arq-style): settings, the store,
Redis, the event publisher and the auxiliary clients (kept warm: one SDK client per channel).

Tests install a runtime of their own; a worker process builds one from its settings on the
first job, which works the same under a forking worker, a simple worker or a pool.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import redis

from compaction.service.context import SessionContexts
from compaction.service.defaults import Default
from compaction.service.events import EventPublisher
from compaction.service.redis import redis_client
from compaction.service.settings import Settings
from compaction.store import Store, make_sessionmaker
from compaction.store.records import ChannelConfig
from compaction.worker.llm import ChatClient, build_client, client_key

ClientFactory = Callable[[ChannelConfig], ChatClient]


@dataclass
class Runtime:
    settings: Settings
    store: Store
    redis: redis.Redis
    publisher: EventPublisher
    client_factory: ClientFactory | None = None
    #: the offline summarizer answers while no auxiliary channel is configured, and only then
    #: (the embedded mode: ``worker.summarizers``); a configured channel that fails fails
    offline_without_channel: bool = False
    name: str = field(default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}")
    _clients: dict[tuple[object, ...], ChatClient] = field(default_factory=dict, repr=False)
    _channels: dict[str | None, tuple[ChannelConfig, float]] = field(
        default_factory=dict, repr=False
    )
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    #: the one resolution of a session's window, threshold and protected head
    contexts: SessionContexts = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.contexts = SessionContexts(self.store, self.settings)

    @classmethod
    def from_settings(cls, settings: Settings) -> Runtime:
        client = redis_client(settings.redis_url)
        return cls(
            settings=settings,
            store=Store(make_sessionmaker(settings.database_url)),
            redis=client,
            publisher=EventPublisher(
                client, prefix=settings.channel_prefix, stream_maxlen=settings.events_stream_maxlen
            ),
        )

    def auxiliary_channel(self, agent_id: str | None) -> ChannelConfig:
        """The agent's auxiliary channel (docs/architecture.md, "Settings"), resolved through the
        store at most every ``channel_cache_s`` seconds: two or three queries a job saved under
        load."""
        now = time.monotonic()
        with self._lock:
            cached = self._channels.get(agent_id)
        if cached is not None and cached[1] > now:
            return cached[0]
        # a failure is never cached
        channel = self.store.resolve_auxiliary(
            agent_id, key_env_pattern=self.settings.channel_key_env_pattern
        )
        if self.settings.channel_cache_s > 0:
            with self._lock:
                self._channels[agent_id] = (channel, now + self.settings.channel_cache_s)
        return channel

    def client_for(self, channel: ChannelConfig) -> ChatClient:
        """One client per channel configuration, reused across jobs (warm connections)."""
        if self.client_factory is not None:
            return self.client_factory(channel)
        key = client_key(channel)
        with self._lock:
            if key not in self._clients:
                self._clients[key] = build_client(channel, self.settings)
            return self._clients[key]


def _from_environment() -> Runtime:
    return Runtime.from_settings(Settings())


_DEFAULT: Default[Runtime] = Default(_from_environment)
#: install the runtime jobs use (tests; a worker process before its first job)
install = _DEFAULT.set
#: the runtime of this process, built from the settings on first use
current = _DEFAULT.get
