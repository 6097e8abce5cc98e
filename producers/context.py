"""The producers' one object (docs/architecture.md, "Layers"): the resources they use (settings,
the store, Redis, and the per-instance caches: token estimates, session contexts, standing
compactions), and a method for everything a gateway calls, each delegating to the module that
implements it (``trigger``, ``ensure``, ``wait``, ``tokens``, ``stats``, ``relay``); ``aio()``
gives the asyncio twin (``producers.aio.AsyncProducers``). A gateway builds one ``Producers`` at
start-up; the module-level functions of ``producers`` use a default one built from the settings
on first use (or the one given to ``producers.configure``).

Those modules take a ``Producers`` as their first argument and import it for typing only; this
module imports them as modules, so that whichever loads first, the other's names are read at
call time."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import redis

from compaction.core.tokens import TextEstimator
from compaction.producers import aio as twins
from compaction.producers import (
    bounds,
    commands,
    drafts,
    ensure,
    pins,
    stats,
    tokens,
    trigger,
    wait,
)
from compaction.producers import recall as recalls
from compaction.producers import relay as relays
from compaction.producers.estimate import SessionEstimates
from compaction.producers.standing import StandingCounts
from compaction.service.context import SessionContext, SessionContexts
from compaction.service.defaults import Default
from compaction.service.redis import redis_client
from compaction.service.settings import Settings
from compaction.store import SessionInfo, SessionListing, Store, make_sessionmaker

if TYPE_CHECKING:
    from compaction.core.contract import AnyEvent, TokenUpdate, TokenUsage
    from compaction.core.messages import Message
    from compaction.producers.aio import AsyncProducers
    from compaction.producers.drafts import AppliedDraft
    from compaction.producers.ensure import Ensured
    from compaction.producers.relay import EventRelay
    from compaction.producers.trigger import TriggerResult
    from compaction.service.queue import EnqueueResult
    from compaction.store.drafts import DraftRecord


@dataclass
class Producers:
    settings: Settings
    store: Store
    redis: redis.Redis
    estimates: SessionEstimates = field(default_factory=SessionEstimates)
    #: the standing compactions per session version (``token_update``'s count)
    standing: StandingCounts = field(default_factory=StandingCounts)
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

    def aio(self) -> AsyncProducers:
        """The asyncio twin: the same methods, awaitable."""
        return twins.AsyncProducers(self)

    # --- the pre-call hook and the requests (trigger.py, ensure.py) -------------------------

    def ensure_compacted(
        self,
        session_id: str,
        *,
        model: str | None = None,
        messages: Sequence[Message] | None = None,
        system_prompt: str | None = None,
        timeout: float = 60.0,
        wait: bool = True,
        info: SessionInfo | None = None,
    ) -> Ensured:
        return ensure.ensure_compacted(
            self,
            session_id,
            model=model,
            messages=messages,
            system_prompt=system_prompt,
            timeout=timeout,
            wait=wait,
            info=info,
        )

    def check_and_enqueue(
        self,
        session_id: str,
        *,
        model: str | None = None,
        messages: Sequence[Message] | None = None,
        system_prompt: str | None = None,
        info: SessionInfo | None = None,
    ) -> TriggerResult:
        """``info``: the session's row as the caller's append just left it, instead of a read
        (``trigger.resolve_written``)."""
        return trigger.check_and_enqueue(
            self,
            session_id,
            model=model,
            messages=messages,
            system_prompt=system_prompt,
            info=info,
        )

    def request_manual(
        self,
        session_id: str,
        *,
        focus: str | None = None,
        context_window: int | None = None,
        review: bool = False,
    ) -> EnqueueResult:
        return trigger.request_manual(
            self, session_id, focus=focus, context_window=context_window, review=review
        )

    parse_slash_command = staticmethod(commands.parse_slash_command)

    # --- what is written (bounds.py) ---------------------------------------------------------

    def refuse_oversized(self, context: SessionContext, messages: Sequence[Message]) -> None:
        """``message_too_large`` for a message alone over the session's threshold
        (docs/algorithm.md, "Bounds"): call it before storing what a user sends."""
        bounds.refuse_oversized(self.settings, context, messages)

    def append_messages(
        self, session_id: str, messages: Sequence[Message], *, model: str | None = None
    ) -> list[int]:
        """``Store.append_messages`` after ``refuse_oversized`` at the session's threshold
        (under ``model``'s window when given); returns the new ids."""
        self.refuse_oversized(self.contexts.resolve(session_id, model=model), messages)
        return self.store.append_messages(session_id, list(messages))

    # --- waiting and the events (wait.py, tokens.py, relay.py) -----------------------------

    def wait_for_compaction(self, session_id: str, timeout: float = 60.0) -> AnyEvent | None:
        return wait.wait_for_compaction(self, session_id, timeout)

    def wait_for_request(self, session_id: str, request_id: str, timeout: float = 60.0) -> AnyEvent:
        return wait.wait_for_request(self, session_id, request_id, timeout)

    def token_update(
        self,
        session_id: str,
        *,
        model: str | None = None,
        usage: TokenUsage | Mapping[str, int] | None = None,
        info: SessionInfo | None = None,
    ) -> TokenUpdate:
        """The session's ``token_update``, not published; ``info`` as ``check_and_enqueue``'s."""
        return tokens.token_update(self, session_id, model=model, usage=usage, info=info)

    def publish_token_update(
        self,
        session_id: str,
        *,
        model: str | None = None,
        usage: TokenUsage | Mapping[str, int] | None = None,
        info: SessionInfo | None = None,
    ) -> TokenUpdate:
        return tokens.publish_token_update(self, session_id, model=model, usage=usage, info=info)

    def relay(self, session_id: str | None = None, *, since: str | None = None) -> EventRelay:
        """An ``EventRelay`` on these resources, subscribed once returned."""
        return relays.EventRelay(session_id, ctx=self, since=since)

    # --- a review's drafts (drafts.py) -------------------------------------------------------

    def get_draft(self, draft_id: int) -> DraftRecord:
        return self.store.get_draft(draft_id)

    def session_drafts(self, session_id: str) -> list[DraftRecord]:
        return self.store.session_drafts(session_id)

    def edit_draft(self, draft_id: int, summary: str) -> DraftRecord:
        return drafts.edit_draft(self, draft_id, summary)

    def discard_draft(self, draft_id: int) -> DraftRecord:
        return self.store.discard_draft(draft_id)

    def apply_draft(self, draft_id: int) -> AppliedDraft:
        return drafts.apply_draft(self, draft_id)

    def regenerate_draft(self, draft_id: int, *, focus: str | None = None) -> EnqueueResult:
        return drafts.regenerate_draft(self, draft_id, focus)

    # --- pins (pins.py) ---------------------------------------------------------------------

    def pin(self, session_id: str, message_id: int) -> dict[str, Any]:
        """Pin a stored message (docs/architecture.md, "Pins"); ``pins_over_threshold`` when
        the pins with the system prompt would reach the session's threshold."""
        return pins.set_pinned(self, session_id, message_id, True)

    def unpin(self, session_id: str, message_id: int) -> dict[str, Any]:
        return pins.set_pinned(self, session_id, message_id, False)

    # --- recall (recall.py) -----------------------------------------------------------------

    def recall(
        self, session_id: str, query: str, max_tokens: int = recalls.DEFAULT_TOKENS
    ) -> dict[str, Any]:
        """The session's compacted originals matching ``query``, within ``max_tokens``
        (docs/architecture.md, "Recall")."""
        return recalls.recall(self, session_id, query, max_tokens)

    # --- the context figures (stats.py) -----------------------------------------------------

    def session_stats(self, session_id: str) -> dict[str, Any]:
        return stats.session_stats(self, session_id)

    def session_items(self, limit: int = 100) -> list[dict[str, Any]]:
        return stats.session_items(self, limit)

    def session_item(self, listed: SessionListing, compactions: int) -> dict[str, Any]:
        return stats.session_item(self, listed, compactions)

    def record_turn(
        self, session_id: str, ensured: Ensured, usage: TokenUsage, model: str | None
    ) -> int:
        return stats.record_turn(self, session_id, ensured, usage, model)


_DEFAULT: Default[Producers] = Default(Producers.from_settings)
#: install the ``Producers`` the module-level functions use (``None``: build from the settings)
configure = _DEFAULT.set
#: the ``Producers`` the module-level functions use
default = _DEFAULT.get
