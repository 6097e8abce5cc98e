"""A session's context figures, one home for ``compaction stats --json``, the gateway's
``context-stats`` and its session list (docs/architecture.md, "The gateway"): tokens of the
compacted view against the window and the threshold, per role and per segment
(``compaction.core.segments``), the standing compactions, and the per-turn rows the gateway records
after each model call (``record_turn``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from compaction.core.contract import ContextWarning, TokenUsage
from compaction.core.messages import Message
from compaction.core.pins import pinned_tokens
from compaction.core.segments import tag_of, tokens_by_segment
from compaction.core.tokens import estimate_tokens
from compaction.producers.ensure import Ensured
from compaction.producers.trigger import used_tokens
from compaction.service import logs
from compaction.service.gate import session_warning
from compaction.store import SessionListing
from compaction.store.records import RunRecord
from compaction.store.token_stats import TokenStat

if TYPE_CHECKING:  # producers/context.py imports this module
    from compaction.producers.context import Producers

#: the per-turn decision line (docs/architecture.md, "Logs and metrics")
decisions = logs.get_logger(logs.DECISIONS)

#: the per-turn rows context stats serve
TURNS_SHOWN = 10


def percent(used: int, window: int) -> float:
    return round(100 * used / window, 1)


def session_stats(ctx: Producers, session_id: str) -> dict[str, Any]:
    store = ctx.store
    session = ctx.contexts.resolve(session_id)
    estimate = ctx.estimator
    view = store.load_history(session_id)
    messages = [stored.message for stored in view]
    counts = [estimate_tokens(m, estimate) for m in messages]
    by_role: dict[str, int] = {}
    for message, tokens in zip(messages, counts, strict=True):
        by_role[message.role] = by_role.get(message.role, 0) + tokens
    tags = [tag_of(stored.metadata) for stored in view]
    turns = [turn.to_wire() for turn in store.token_stats(session_id, TURNS_SHOWN)]
    used = sum(by_role.values())
    runs = store.runs(session_id)
    last = runs[-1] if runs else None
    return {
        "sessionId": session_id,
        "messages": len(view),
        "usedTokens": used,
        "maxTokens": session.window,
        "percent": percent(used, session.window),
        "thresholdPercent": session.threshold_percent,
        "thresholdTokens": session.threshold_tokens,
        # The seed's name for the same figure: the tokens the context may use before compacting.
        "budgetTokens": session.threshold_tokens,
        #: the fixed budget that sets it, when one does (else the percentage of the window)
        "tokenBudget": session.token_budget,
        "estimated": True,
        "tokensByRole": by_role,
        "tokensBySegment": tokens_by_segment(messages, counts, tags),
        # what no compaction frees (docs/architecture.md, "Pins")
        "pinnedTokens": pinned_tokens(messages, counts),
        "latestTurn": turns[0] if turns else None,
        "turns": turns,
        "compactions": store.compaction_counts([session_id]).get(session_id, 0),
        # as the latest token_update says it: the console's band on load ("The gate")
        "warning": _wire(session_warning(store, session, used)),
        **_spent(runs),
        "lastRun": None
        if last is None
        else {
            "id": last.id,
            "status": last.status,
            "code": last.code,
            "reason": last.reason,
            "tokensBefore": last.tokens_before,
            "tokensAfter": last.tokens_after,
            "removedCount": last.removed_count,
            "finishedAt": last.finished_at.isoformat(),
        },
    }


def _spent(runs: Sequence[RunRecord]) -> dict[str, Any]:
    """What the session's compactions cost (docs/architecture.md, "Receipt"): the auxiliary
    model's tokens and the USD of the runs whose channel had prices (null: none had)."""
    costs = [run.cost for run in runs if run.cost is not None]
    return {
        "compactionCost": sum(costs) if costs else None,
        "auxTokens": {
            "input": sum(run.input_tokens or 0 for run in runs),
            "output": sum(run.output_tokens or 0 for run in runs),
        },
    }


def _wire(warning: ContextWarning | None) -> dict[str, Any] | None:
    return None if warning is None else warning.model_dump(by_alias=True)


def session_items(ctx: Producers, limit: int = 100) -> list[dict[str, Any]]:
    """The newest sessions with their figures (the console's session list); the tokens come
    from the producers' incremental estimates, so an unchanged session reads no rows."""
    listed = ctx.store.list_sessions(limit)
    counts = ctx.store.compaction_counts([s.id for s in listed])
    return [session_item(ctx, s, counts.get(s.id, 0)) for s in listed]


def session_item(ctx: Producers, listed: SessionListing, compactions: int) -> dict[str, Any]:
    session = ctx.contexts.resolve(listed.id)
    used, _system = used_tokens(ctx, session, None, None)
    return {
        "id": listed.id,
        "title": listed.title,
        "agentId": listed.agent_id,
        "model": listed.model,
        "messages": listed.messages,
        "usedTokens": used,
        "maxTokens": session.window,
        "percent": percent(used, session.window),
        "thresholdPercent": session.threshold_percent,
        "compactions": compactions,
        "createdAt": listed.created_at.isoformat(),
    }


def record_turn(
    ctx: Producers, session_id: str, ensured: Ensured, usage: TokenUsage, model: str | None
) -> int:
    """Record one model call (``turn_stat``) and log its decision (``log_decision``); the row's
    id. The gateway's turn writes the figures with its reply instead, in one transaction."""
    stat = turn_stat(ctx, session_id, ensured, usage, model)
    stat_id = ctx.store.record_token_stat(stat)
    log_decision(stat)
    return stat_id


def turn_stat(
    ctx: Producers, session_id: str, ensured: Ensured, usage: TokenUsage, model: str | None
) -> TokenStat:
    """One model call's figures: the tokens per segment of the messages it was sent, the
    threshold and the pre-call hook's decision. The messages sent carry no metadata, so a
    stored row's segment tag counts in ``session_stats`` only."""
    messages: Sequence[Message] = ensured.messages
    counts = [estimate_tokens(m, ctx.estimator) for m in messages]
    return TokenStat(
        session_id=session_id,
        tokens=tokens_by_segment(messages, counts),
        total_tokens=sum(counts),
        decision=ensured.status,
        threshold_tokens=ensured.trigger.threshold_tokens,
        model=model,
        usage={"inputTokens": usage.input_tokens, "outputTokens": usage.output_tokens},
    )


def log_decision(stat: TokenStat) -> None:
    """The per-turn ``compact decision`` line (``logs.DECISIONS``, shown by a default run),
    once its figures are stored."""
    decisions.info(
        "compact decision",
        session=stat.session_id,
        decision=stat.decision,
        total=stat.total_tokens,
        threshold=stat.threshold_tokens,
        **stat.tokens,
    )
