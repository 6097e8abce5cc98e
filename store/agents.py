"""Agents' compaction settings (docs/architecture.md, "Settings", "Tables").

An agent's threshold, protected head, token budget, auxiliary channel, ``autoCompact`` mode,
warning level and chat channel are optional: left blank (``None``), the system setting applies
(``COMPACTION_THRESHOLD_PERCENT``, ``COMPACTION_PROTECT_FIRST_N``, ``COMPACTION_TOKEN_BUDGET``,
the default auxiliary channel, ``COMPACTION_AUTO_COMPACT``, ``COMPACTION_WARN_PERCENT``, the
gateway's chat channel rule). A new agent starts with all of them blank.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy.orm import Session

from compaction.core.config import (
    AUTO_COMPACT_MODES,
    PROTECT_FIRST_N_MAX,
    PROTECT_FIRST_N_MIN,
    STRATEGIES,
    THRESHOLD_PERCENT_MAX,
    THRESHOLD_PERCENT_MIN,
    THRESHOLD_PERCENT_STEP,
    TOKEN_BUDGET_MIN,
    WARN_PERCENT_MAX,
    WARN_PERCENT_MIN,
)
from compaction.core.contract import CONTEXT_WINDOW_MAX, CONTEXT_WINDOW_MIN
from compaction.core.errors import InvalidRequest
from compaction.store.db import Repository, read_session, write_session
from compaction.store.models import Agent, ModelChannel
from compaction.store.records import AgentSettings
from compaction.store.sessions import check_name


def validate_agent_settings(
    threshold_percent: int | None, protect_first_n: int | None, strategy: str | None
) -> None:
    """The ranges of ``compaction.core.config``, the agent's threshold on its steps."""
    if threshold_percent is not None and (
        not THRESHOLD_PERCENT_MIN <= threshold_percent <= THRESHOLD_PERCENT_MAX
        or threshold_percent % THRESHOLD_PERCENT_STEP
    ):
        raise InvalidRequest(
            f"threshold {threshold_percent}% is out of range: {THRESHOLD_PERCENT_MIN} to "
            f"{THRESHOLD_PERCENT_MAX}, in steps of {THRESHOLD_PERCENT_STEP}"
        )
    if protect_first_n is not None and not (
        PROTECT_FIRST_N_MIN <= protect_first_n <= PROTECT_FIRST_N_MAX
    ):
        raise InvalidRequest(
            f"protected head {protect_first_n} is out of range: "
            f"{PROTECT_FIRST_N_MIN} to {PROTECT_FIRST_N_MAX}"
        )
    if strategy is not None and strategy not in STRATEGIES:
        known = " or ".join(repr(s) for s in STRATEGIES)
        # quoted cut short: a refusal never carries a client's 100,000 characters back
        raise InvalidRequest(f"unknown compaction strategy {strategy[:40]!r}; expected {known}")


def _validate_budget(token_budget: int | None) -> None:
    # A budget is a threshold in tokens: never over the largest window (the column is 32-bit).
    if token_budget is not None and not TOKEN_BUDGET_MIN <= token_budget <= CONTEXT_WINDOW_MAX:
        low = token_budget < TOKEN_BUDGET_MIN
        bound = f"at least {TOKEN_BUDGET_MIN}" if low else f"at most {CONTEXT_WINDOW_MAX}"
        raise InvalidRequest(f"token budget {token_budget} is out of range: {bound}")


def _validate_request(model: str | None, context_window: int | None) -> None:
    """The job carries the agent's model and window: bounds the job refuses are refused here."""
    if (
        context_window is not None
        and not CONTEXT_WINDOW_MIN <= context_window <= CONTEXT_WINDOW_MAX
    ):
        raise InvalidRequest(
            f"context window {context_window} is out of range: "
            f"{CONTEXT_WINDOW_MIN} to {CONTEXT_WINDOW_MAX}"
        )
    check_name(model, "model")


def _validate_gate(auto_compact: str | None, warn_percent: int | None) -> None:
    """The gate's values (docs/architecture.md, "The gate"); the warning level against the
    threshold is the caller's ``check`` (it needs the system's settings)."""
    if auto_compact is not None and auto_compact not in AUTO_COMPACT_MODES:
        known = ", ".join(AUTO_COMPACT_MODES)
        raise InvalidRequest(f"autoCompact {auto_compact[:40]!r} is not one of: {known}")
    if warn_percent is not None and not WARN_PERCENT_MIN <= warn_percent <= WARN_PERCENT_MAX:
        raise InvalidRequest(
            f"warning level {warn_percent}% is out of range: "
            f"{WARN_PERCENT_MIN} to {WARN_PERCENT_MAX}"
        )


def _not_both(label: str, value: object, clear: bool) -> None:
    if value is not None and clear:
        raise InvalidRequest(f"set the {label} or clear it, not both")


def agent_settings(row: Agent) -> AgentSettings:
    return AgentSettings(
        id=row.id,
        model=row.model,
        context_window=row.context_window,
        auxiliary_model_channel_id=row.auxiliary_model_channel_id,
        compaction_strategy=row.compaction_strategy,
        compaction_threshold_percent=row.compaction_threshold_percent,
        compaction_protect_first_n=row.compaction_protect_first_n,
        token_budget=row.token_budget,
        auto_compact=row.auto_compact,
        warn_percent=row.warn_percent,
        chat_channel_id=row.chat_channel_id,
    )


def _set_channel(session: Session, agent: Agent, channel_id: int) -> None:
    channel = session.get(ModelChannel, channel_id)
    if channel is None or not channel.is_auxiliary:
        raise InvalidRequest(f"channel {channel_id} is not an auxiliary channel")
    agent.auxiliary_model_channel_id = channel_id


def _set_chat_channel(session: Session, agent: Agent, channel_id: int) -> None:
    channel = session.get(ModelChannel, channel_id)
    if channel is None or channel.is_auxiliary:
        raise InvalidRequest(
            f"channel {channel_id} cannot answer chat turns: choose a channel that is not auxiliary"
        )
    agent.chat_channel_id = channel_id


class Agents(Repository):
    def set_agent(
        self,
        agent_id: str,
        *,
        threshold_percent: int | None = None,
        clear_threshold: bool = False,
        protect_first_n: int | None = None,
        clear_protect_first_n: bool = False,
        token_budget: int | None = None,
        clear_token_budget: bool = False,
        strategy: str | None = None,
        auxiliary_channel_id: int | None = None,
        clear_auxiliary_channel: bool = False,
        model: str | None = None,
        context_window: int | None = None,
        auto_compact: str | None = None,
        clear_auto_compact: bool = False,
        warn_percent: int | None = None,
        clear_warn_percent: bool = False,
        chat_channel_id: int | None = None,
        clear_chat_channel: bool = False,
        check: Callable[[AgentSettings], None] | None = None,
    ) -> AgentSettings:
        """Create or update an agent's compaction settings: what is given is set, what is
        cleared goes back to the system setting, the rest is kept. Out-of-range values, and a
        value both given and cleared, are refused before anything is written; so is what
        ``check`` refuses of the agent's settings as they would be (it raises)."""
        check_name(agent_id, "agent id")
        validate_agent_settings(threshold_percent, protect_first_n, strategy)
        _validate_request(model, context_window)
        _validate_budget(token_budget)
        _validate_gate(auto_compact, warn_percent)
        _not_both("threshold", threshold_percent, clear_threshold)
        _not_both("protected head", protect_first_n, clear_protect_first_n)
        _not_both("token budget", token_budget, clear_token_budget)
        _not_both("auxiliary channel", auxiliary_channel_id, clear_auxiliary_channel)
        _not_both("autoCompact", auto_compact, clear_auto_compact)
        _not_both("warning level", warn_percent, clear_warn_percent)
        _not_both("chat channel", chat_channel_id, clear_chat_channel)
        with write_session(self.factory) as session:
            agent = session.get(Agent, agent_id)
            if agent is None:
                agent = Agent(id=agent_id)
                session.add(agent)
            if auxiliary_channel_id is not None:
                _set_channel(session, agent, auxiliary_channel_id)
            if chat_channel_id is not None:
                _set_chat_channel(session, agent, chat_channel_id)
            for field, value, clear in (
                ("compaction_threshold_percent", threshold_percent, clear_threshold),
                ("compaction_protect_first_n", protect_first_n, clear_protect_first_n),
                ("token_budget", token_budget, clear_token_budget),
                ("auxiliary_model_channel_id", None, clear_auxiliary_channel),
                ("compaction_strategy", strategy, False),
                ("model", model, False),
                ("context_window", context_window, False),
                ("auto_compact", auto_compact, clear_auto_compact),
                ("warn_percent", warn_percent, clear_warn_percent),
                ("chat_channel_id", None, clear_chat_channel),
            ):
                if value is not None or clear:
                    setattr(agent, field, value)
            session.flush()
            settings = agent_settings(agent)
            if check is not None:
                check(settings)  # raising rolls the transaction back
            return settings

    def get_agent(self, agent_id: str) -> AgentSettings | None:
        with read_session(self.factory) as session:
            row = session.get(Agent, agent_id)
            return agent_settings(row) if row is not None else None
