"""A session's context, resolved one way for the producers and the worker (docs/architecture.md,
"Settings"): its model, context window, threshold (a percentage of the window or a fixed token
budget) and protected head, and the anti-loop rule's input.

Resolution order: the request's own values, then the model registry (``COMPACTION_MODEL_WINDOWS``
over the built-in table), then the session's agent, then the settings. The session and agent
rows are read through ``SessionContexts``, which caches them per instance, bounded in size and
age: the threshold check runs before every model call.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar, cast

from cachetools import TTLCache

from compaction.core import antiloop
from compaction.core.config import CompactionConfig, threshold_tokens
from compaction.core.contract import AutoCompact
from compaction.core.errors import InvalidConfig
from compaction.core.gate import warn_tokens
from compaction.core.windows import context_window
from compaction.service.settings import Settings
from compaction.store import Store
from compaction.store.records import AgentSettings, SessionInfo

T = TypeVar("T")
V = TypeVar("V", int, int | None, str)

#: a session's agent and model change rarely; the check runs before every model call
CACHE_S = 5.0
CACHE_SIZE = 10_000


@dataclass(frozen=True, slots=True)
class SessionContext:
    info: SessionInfo
    agent: AgentSettings | None
    model: str | None
    window: int
    threshold_percent: int
    protect_first_n: int
    #: a fixed threshold in tokens; ``None``: ``threshold_percent`` of the window
    token_budget: int | None = None
    #: over the threshold: compact, ask the user, or wait for ``/compact`` ("The gate")
    auto_compact: AutoCompact = "on"
    #: the warning level in percent of the window; ``None``: below the threshold by default
    warn_percent: int | None = None

    @property
    def threshold_tokens(self) -> int:
        return threshold_tokens(self.window, self.threshold_percent, self.token_budget)

    @property
    def warn_tokens(self) -> int:
        return warn_tokens(self.window, self.threshold_tokens, self.warn_percent)

    def config(self, settings: Settings, **overrides: Any) -> CompactionConfig:
        """The algorithm's configuration for this session: the producers' check and the worker
        build it here, so both compact at the same threshold."""
        return settings.compaction_config(
            context_window=self.window,
            threshold_percent=self.threshold_percent,
            protect_first_n=self.protect_first_n,
            token_budget=self.token_budget,
            **overrides,
        )


def resolve_context(
    settings: Settings,
    info: SessionInfo,
    agent: AgentSettings | None,
    *,
    model: str | None = None,
    window: int | None = None,
) -> SessionContext:
    """The one rule: a request's values, the registry, the agent, the settings."""
    model = model or info.model or (agent.model if agent else None)
    window = (
        window
        or context_window(model, settings.model_windows)
        or (agent.context_window if agent else None)
        or settings.context_window
    )
    threshold = threshold_percent(settings, agent).value
    protect = protect_first_n(settings, agent).value
    budget = token_budget(settings, agent).value
    mode = auto_compact(settings, agent).value
    warn = warn_percent(settings, agent).value
    return SessionContext(
        info, agent, model, window, threshold, protect, budget, cast(AutoCompact, mode), warn
    )


@dataclass(frozen=True, slots=True)
class Inherited(Generic[V]):
    """A value an agent may leave blank: its own, or the system setting's."""

    value: V
    source: Literal["agent", "system"]


def _own_or_system(own: V | None, system: V) -> Inherited[V]:
    return Inherited(own, "agent") if own is not None else Inherited(system, "system")


def token_budget(settings: Settings, agent: AgentSettings | None) -> Inherited[int | None]:
    """The agent's fixed budget, else ``COMPACTION_TOKEN_BUDGET``; ``None`` from both: the
    threshold is a percentage of the window."""
    own = agent.token_budget if agent else None
    return _own_or_system(own, settings.token_budget)


def threshold_percent(settings: Settings, agent: AgentSettings | None) -> Inherited[int]:
    """The agent's threshold, else ``COMPACTION_THRESHOLD_PERCENT``."""
    own = agent.compaction_threshold_percent if agent else None
    return _own_or_system(own, settings.threshold_percent)


def auto_compact(settings: Settings, agent: AgentSettings | None) -> Inherited[str]:
    """The agent's ``autoCompact`` mode, else ``COMPACTION_AUTO_COMPACT`` (``on``)."""
    own = agent.auto_compact if agent else None
    return _own_or_system(own, settings.auto_compact)


def warn_percent(settings: Settings, agent: AgentSettings | None) -> Inherited[int | None]:
    """The agent's warning level, else ``COMPACTION_WARN_PERCENT``; ``None`` from both: the
    threshold less ``WARN_POINTS_BELOW`` points (``compaction.core.gate.warn_tokens``)."""
    own = agent.warn_percent if agent else None
    return _own_or_system(own, settings.warn_percent)


def check_warn_level(settings: Settings, agent: AgentSettings) -> None:
    """``invalid_config`` when the agent's warning level (its own or the system's) is at or
    above its threshold percent: the warning comes before the automatic compaction. With a
    fixed token budget the threshold's share depends on the model's window: the level is then
    met at the threshold at most (``compaction.core.gate``)."""
    warn = warn_percent(settings, agent).value
    threshold = threshold_percent(settings, agent).value
    if warn is None or token_budget(settings, agent).value is not None:
        return
    if warn >= threshold:
        raise InvalidConfig(
            f"warning level {warn}% must be below the threshold of {threshold}%: the warning "
            "comes before the automatic compaction"
        )


def protect_first_n(settings: Settings, agent: AgentSettings | None) -> Inherited[int]:
    """The agent's protected head, else ``COMPACTION_PROTECT_FIRST_N``."""
    own = agent.compaction_protect_first_n if agent else None
    return _own_or_system(own, settings.protect_first_n)


class SessionContexts:
    """Reads sessions' contexts through ``store``; rows cached per instance (``CACHE_SIZE``
    entries, ``CACHE_S`` seconds)."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        *,
        cache_s: float = CACHE_S,
        cache_size: int = CACHE_SIZE,
    ) -> None:
        self.store = store
        self.settings = settings
        self._sessions: TTLCache[str, SessionInfo] = TTLCache(cache_size, cache_s)
        self._agents: TTLCache[str, AgentSettings | None] = TTLCache(cache_size, cache_s)
        self._lock = threading.Lock()

    def resolve(
        self,
        session_id: str,
        *,
        model: str | None = None,
        window: int | None = None,
        fresh: bool = True,
    ) -> SessionContext:
        """``fresh=False`` may reuse the session row read a moment ago (a gateway that passes
        the messages needs no row counters); the agent's settings may always be that old."""
        if fresh:
            info = self.store.get_session(session_id)
            self._put(self._sessions, session_id, info)
        else:
            info = self._cached(self._sessions, session_id, self.store.get_session)
        agent_id = info.agent_id
        agent = None if agent_id is None else self._cached(self._agents, agent_id, self._agent)
        return resolve_context(self.settings, info, agent, model=model, window=window)

    def suppressed(self, session_id: str, tokens: int) -> bool:
        """The anti-loop rule on the session's latest succeeded compactions (two rows read,
        however long the session's history of runs)."""
        return antiloop.suppressed(self.store.recent_run_tokens(session_id), tokens)

    def forget_agent(self, agent_id: str) -> None:
        """This instance's next read of the agent's settings goes to the store (one that just
        changed them answers with the new values; others may be ``CACHE_S`` behind)."""
        with self._lock:
            self._agents.pop(agent_id, None)

    def _agent(self, agent_id: str) -> AgentSettings | None:
        return self.store.get_agent(agent_id)

    def _cached(self, cache: TTLCache[str, Any], key: str, load: Callable[[str], T]) -> T:
        with self._lock:
            hit = cache.get(key, _MISSING)
        if hit is not _MISSING:
            return hit  # type: ignore[no-any-return]
        value = load(key)
        self._put(cache, key, value)
        return value

    def _put(self, cache: TTLCache[str, Any], key: str, value: object) -> None:
        with self._lock:
            cache[key] = value


_MISSING = object()
