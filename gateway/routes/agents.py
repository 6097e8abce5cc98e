"""Agents' compaction settings over HTTP (docs/architecture.md, "Settings"), as ``agent show
--json`` and ``agent set`` give them: each value with where it comes from, ``null`` clearing a
value back to the system's."""

from __future__ import annotations

from functools import partial
from typing import Annotated

from fastapi import APIRouter, Path

from compaction.core.errors import InvalidRequest, NotFound
from compaction.gateway.deps import ProducersDep
from compaction.gateway.responses import Agent, AgentList
from compaction.gateway.schemas import ERRORS, AgentUpdate
from compaction.producers.views import agent_view, show_agent
from compaction.service.context import check_warn_level
from compaction.store import Store

router = APIRouter(tags=["agents"], responses=ERRORS)

AgentId = Annotated[str, Path(description="the agent's id")]


@router.get("/api/agents")
def list_agents(ctx: ProducersDep) -> AgentList:
    return AgentList(agents=ctx.store.list_agents())


@router.get("/api/agents/{agent_id}")
def get_agent(ctx: ProducersDep, agent_id: AgentId) -> Agent:
    """The agent's own values (``null``: blank, inherited) and the ``effective`` ones, each
    with its ``source``: ``agent``, ``system`` (the setting named) or the default channel."""
    return Agent.of(show_agent(ctx.settings, ctx.store, agent_id))


@router.put("/api/agents/{agent_id}")
def put_agent(ctx: ProducersDep, agent_id: AgentId, body: AgentUpdate) -> Agent:
    """Create or update: a key given sets the value, a key given as ``null`` clears it (the
    system setting, or the default channel, applies), a key left out is unchanged. A warning
    level at or over the agent's threshold is refused (``invalid_config``)."""
    store = ctx.store
    agent = store.set_agent(
        agent_id,
        threshold_percent=body.threshold_percent,
        clear_threshold=_cleared(body, "threshold_percent"),
        protect_first_n=body.protect_first_n,
        clear_protect_first_n=_cleared(body, "protect_first_n"),
        token_budget=body.token_budget,
        clear_token_budget=_cleared(body, "token_budget"),
        strategy=body.compaction_strategy,
        auxiliary_channel_id=_channel_id(store, body.auxiliary_channel),
        clear_auxiliary_channel=_cleared(body, "auxiliary_channel"),
        model=body.model,
        context_window=body.context_window,
        auto_compact=body.auto_compact,
        clear_auto_compact=_cleared(body, "auto_compact"),
        warn_percent=body.warn_percent,
        clear_warn_percent=_cleared(body, "warn_percent"),
        chat_channel_id=_channel_id(store, body.chat_channel),
        clear_chat_channel=_cleared(body, "chat_channel"),
        # a warning level at or over the threshold: invalid_config ("The gate")
        check=partial(check_warn_level, ctx.settings),
    )
    ctx.contexts.forget_agent(agent_id)  # this process's figures follow at once
    return Agent.of(agent_view(ctx.settings, store, agent))


def _cleared(body: AgentUpdate, field: str) -> bool:
    return body.given(field) and getattr(body, field) is None


def _channel_id(store: Store, channel: int | str | None) -> int | None:
    if channel is None:
        return None
    try:
        return store.get_channel(channel).id
    except NotFound as err:  # the agent is there; the body names a channel that is not
        raise InvalidRequest(err.message) from None
