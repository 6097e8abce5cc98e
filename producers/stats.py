"""A session's context figures, one home for ``compaction stats --json``, the gateway's
``context-stats`` and its session list (docs/architecture.md, "The gateway"): tokens of the
compacted view against the window and the threshold, and the standing compactions."""

from __future__ import annotations

from typing import Any

from compaction.tokens import estimate_tokens
from producers.context import Producers
from producers.trigger import used_tokens
from store import SessionListing


def percent(used: int, window: int) -> float:
    return round(100 * used / window, 1)


def session_stats(ctx: Producers, session_id: str) -> dict[str, Any]:
    store = ctx.store
    session = ctx.contexts.resolve(session_id)
    estimate = ctx.estimator
    view = store.load_history(session_id)
    by_role: dict[str, int] = {}
    segments = {"conversation": 0, "tool_loop": 0}
    for stored in view:
        m = stored.message
        tokens = estimate_tokens(m, estimate)
        by_role[m.role] = by_role.get(m.role, 0) + tokens
        # The context-stats split: what was said versus the ReAct loop (calls and results).
        loop = m.role == "tool" or bool(m.tool_calls)
        segments["tool_loop" if loop else "conversation"] += tokens
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
        "estimated": True,
        "tokensByRole": by_role,
        "tokensBySegment": segments,
        "compactions": store.compaction_counts([session_id]).get(session_id, 0),
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
