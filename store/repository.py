"""``Store``: one facade over the store's repositories, built from the sessionmaker it is given.

Each repository is a class of its own holding that sessionmaker; the facade composes them and
offers their methods under the names callers use (``store.load_history(...)`` is
``store.history.load_history(...)``), typed from the repository's own signature, never
written twice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, cast

from sqlalchemy.orm import Session, sessionmaker

from compaction.store.agents import Agents
from compaction.store.auxiliary import Auxiliary
from compaction.store.channels import Channels
from compaction.store.compactions import Compactions
from compaction.store.drafts import Drafts
from compaction.store.history import History
from compaction.store.listing import Listing
from compaction.store.pins import Pins
from compaction.store.recall import Recall
from compaction.store.runs import RunLog
from compaction.store.sessions import Sessions
from compaction.store.token_stats import TokenStats

P = ParamSpec("P")
R = TypeVar("R")


class _Via(Generic[P, R]):
    """A facade method: the method of the same name on one of the store's repositories."""

    def __init__(self, part: str, method: Callable[Concatenate[Any, P], R]) -> None:
        self.part, self.name = part, method.__name__

    def __get__(self, store: Store, owner: type[Store] | None = None) -> Callable[P, R]:
        return cast(Callable[P, R], getattr(getattr(store, self.part), self.name))


class Store:
    """Sessions and messages, the history views, compaction write-back, the runs and restore,
    channels and agent settings, per-turn token stats; every method opens and closes its own
    short transaction."""

    def __init__(self, factory: sessionmaker[Session]) -> None:
        self.factory = factory
        self.sessions = Sessions(factory)
        self.history = History(factory)
        self.compactions = Compactions(factory)
        self.run_log = RunLog(factory)
        self.drafts = Drafts(factory)
        self.channels = Channels(factory)
        self.auxiliary = Auxiliary(factory)
        self.agents = Agents(factory)
        self.listing = Listing(factory)
        self.token_stats_log = TokenStats(factory)
        self.pins = Pins(factory)
        self.recall_search = Recall(factory)

    create_agent = _Via("sessions", Sessions.create_agent)
    create_session = _Via("sessions", Sessions.create_session)
    get_session = _Via("sessions", Sessions.get_session)
    session_exists = _Via("sessions", Sessions.session_exists)
    rename_session = _Via("sessions", Sessions.rename_session)
    append_messages = _Via("sessions", Sessions.append_messages)
    append_positioned = _Via("sessions", Sessions.append_positioned)

    load_history = _Via("history", History.load_history)
    set_pinned = _Via("pins", Pins.set_pinned)
    recall = _Via("recall_search", Recall.recall)
    latest_summary = _Via("history", History.latest_summary)

    apply_compaction = _Via("compactions", Compactions.apply_compaction)
    record_failed_run = _Via("compactions", Compactions.record_failed_run)
    append_event = _Via("compactions", Compactions.append_event)

    create_draft = _Via("drafts", Drafts.create_draft)
    get_draft = _Via("drafts", Drafts.get_draft)
    session_drafts = _Via("drafts", Drafts.session_drafts)
    edit_draft = _Via("drafts", Drafts.edit_draft)
    discard_draft = _Via("drafts", Drafts.discard_draft)
    expire_drafts = _Via("drafts", Drafts.expire_drafts)
    apply_draft = _Via("drafts", Drafts.apply_draft)

    runs = _Via("run_log", RunLog.runs)
    get_run = _Via("run_log", RunLog.get_run)
    recent_run_tokens = _Via("run_log", RunLog.recent_run_tokens)
    restore = _Via("run_log", RunLog.restore)
    compaction_counts = _Via("run_log", RunLog.compaction_counts)

    add_channel = _Via("channels", Channels.add_channel)
    list_channels = _Via("channels", Channels.list_channels)
    recent_channels = _Via("channels", Channels.recent_channels)
    get_channel = _Via("channels", Channels.get_channel)
    edit_channel = _Via("channels", Channels.edit_channel)
    remove_channel = _Via("channels", Channels.remove_channel)
    default_channel_id = _Via("channels", Channels.default_channel_id)
    set_default_channel = _Via("channels", Channels.set_default_channel)

    resolve_auxiliary = _Via("auxiliary", Auxiliary.resolve_auxiliary)
    auxiliary_choice = _Via("auxiliary", Auxiliary.auxiliary_choice)

    set_agent = _Via("agents", Agents.set_agent)
    get_agent = _Via("agents", Agents.get_agent)

    list_sessions = _Via("listing", Listing.list_sessions)
    session_listing = _Via("listing", Listing.session_listing)
    list_agents = _Via("listing", Listing.list_agents)

    record_token_stat = _Via("token_stats_log", TokenStats.record_token_stat)
    token_stats = _Via("token_stats_log", TokenStats.token_stats)
