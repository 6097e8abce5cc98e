"""The JSON shapes a session's reader sees, one home for the command line's ``--json`` and the
gateway's answers (docs/architecture.md, "The gateway"): history rows (snake_case, the
``compaction history --json`` rows), runs, channels (keys masked) and agents (each value with
where it comes from)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compaction.core.errors import NotFound
from compaction.service.context import (
    Inherited,
    auto_compact,
    protect_first_n,
    threshold_percent,
    token_budget,
    warn_percent,
)
from compaction.service.settings import Settings
from compaction.store import AgentSettings, ChannelConfig, RunRecord, Store, StoredMessage
from compaction.store.records import mask, mask_url


def history_rows(view: Sequence[StoredMessage]) -> list[dict[str, Any]]:
    return [
        {
            "id": s.id,
            "seq": s.seq,
            "role": s.message.role,
            "content": s.message.content,
            "tool_calls": [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in s.message.tool_calls
            ],
            "tool_call_id": s.message.tool_call_id,
            "compacted_at": s.compacted_at.isoformat() if s.compacted_at else None,
            "compacted_into_id": s.compacted_into_id,
            "is_compaction_summary": s.is_compaction_summary,
            "pruned_at": s.pruned_at.isoformat() if s.pruned_at else None,
            # never summarized or pruned (docs/architecture.md, "Pins")
            "pinned": s.message.pinned,
            # an event row's systemType, event and figures; a restored summary's restoredByRunId
            "metadata": s.metadata,
        }
        for s in view
    ]


def run_row(run: RunRecord) -> dict[str, Any]:
    """A compaction run as the API lists it (no worker name, no timings)."""
    return {
        "id": run.id,
        "sessionId": run.session_id,
        "requestId": run.request_id,
        "reason": run.reason,
        "status": run.status,
        "code": run.code,
        "error": run.error,
        "tokensBefore": run.tokens_before,
        "tokensAfter": run.tokens_after,
        "removedCount": run.removed_count,
        "prunedCount": run.pruned_count,
        "summaryMessageId": run.summary_message_id,
        "model": run.model,
        "finishedAt": run.finished_at.isoformat(),
        "restoredAt": run.restored_at.isoformat() if run.restored_at else None,
        "inputTokens": run.input_tokens,
        "outputTokens": run.output_tokens,
        "cost": run.cost,
        "receipt": run.receipt,
    }


def channel_row(channel: ChannelConfig, default_id: int | None) -> dict[str, Any]:
    """A channel with its key and base URL masked: keys are write-only."""
    key = channel.api_key.get_secret_value() if channel.api_key else None
    return {
        "id": channel.id,
        "name": channel.name,
        "provider": channel.provider,
        "model": channel.model,
        "baseUrl": mask_url(channel.base_url) if channel.base_url else None,
        "apiKey": mask(key) if key else None,
        "apiKeyEnv": channel.api_key_env,
        "auxiliary": channel.is_auxiliary,
        "default": channel.id == default_id,
        "priceInput": channel.price_input_per_mtok,
        "priceOutput": channel.price_output_per_mtok,
    }


def setting_name(field: str) -> str:
    """The environment variable of a service setting: ``COMPACTION_THRESHOLD_PERCENT``."""
    return f"{Settings.model_config.get('env_prefix', '')}{field.upper()}"


def show_agent(settings: Settings, store: Store, agent_id: str) -> dict[str, Any]:
    """``agent_view`` of a stored agent; ``NotFound`` when there is none."""
    agent = store.get_agent(agent_id)
    if agent is None:
        raise NotFound(f"agent {agent_id!r} not found")
    return agent_view(settings, store, agent)


def agent_view(settings: Settings, store: Store, agent: AgentSettings) -> dict[str, Any]:
    """The agent's own values (``None``: blank) and the ``effective`` ones with their source:
    ``agent``, ``system`` (the setting named), ``default`` (the default channel), ``none``."""
    choice = store.auxiliary_choice(agent.id)
    channel = choice.channel
    return {
        "id": agent.id,
        "model": agent.model,
        "contextWindow": agent.context_window,
        "auxiliaryModelChannelId": agent.auxiliary_model_channel_id,
        "compactionStrategy": agent.compaction_strategy,
        "compactionThresholdPercent": agent.compaction_threshold_percent,
        "compactionProtectFirstN": agent.compaction_protect_first_n,
        "tokenBudget": agent.token_budget,
        "autoCompact": agent.auto_compact,
        "warnPercent": agent.warn_percent,
        "chatChannelId": agent.chat_channel_id,
        # the agent's own choice, named; null: the gateway's rule (docs/architecture.md)
        "chatChannel": _chat_channel(store, agent.chat_channel_id),
        "effective": {
            "thresholdPercent": _inherited(threshold_percent(settings, agent), "threshold_percent"),
            "protectFirstN": _inherited(protect_first_n(settings, agent), "protect_first_n"),
            # ``value: null``: no fixed budget, the threshold is the percentage of the window
            "tokenBudget": _inherited(token_budget(settings, agent), "token_budget"),
            "autoCompact": _inherited(auto_compact(settings, agent), "auto_compact"),
            # ``value: null``: the threshold less 10 points (docs/architecture.md, "The gate")
            "warnPercent": _inherited(warn_percent(settings, agent), "warn_percent"),
            "auxiliaryChannel": {
                "id": choice.channel_id,
                "name": channel.name if channel else None,
                "auxiliary": channel.is_auxiliary if channel else None,
                "source": choice.source,
            },
        },
    }


def _inherited(
    value: Inherited[int] | Inherited[int | None] | Inherited[str], field: str
) -> dict[str, Any]:
    return {"value": value.value, "source": value.source, "setting": setting_name(field)}


def _chat_channel(store: Store, channel_id: int | None) -> dict[str, Any] | None:
    if channel_id is None:
        return None
    try:
        return {"id": channel_id, "name": store.get_channel(channel_id).name}
    except NotFound:  # removed meanwhile: the id alone
        return {"id": channel_id, "name": None}
