"""A session's ``token_update`` warning (docs/architecture.md, "The gate"), for the producers'
updates and the worker's after a run: the core's rule (``compaction.core.gate``) on the
session's resolved context and its recent turns, read only past the warning level."""

from __future__ import annotations

from compaction.core.contract import ContextWarning
from compaction.core.gate import GROWTH_TURNS, context_warning, mean_growth
from compaction.service.context import SessionContext
from compaction.store import Store


def session_warning(store: Store, session: SessionContext, used: int) -> ContextWarning | None:
    """The warning of a session whose context is ``used`` tokens; ``None`` below its level (no
    read then: the update follows every turn)."""
    if used < session.warn_tokens:
        return None
    turns = store.token_stats(session.info.id, GROWTH_TURNS + 1)
    return context_warning(
        used_tokens=used,
        window=session.window,
        threshold_tokens=session.threshold_tokens,
        warn_percent=session.warn_percent,
        mode=session.auto_compact,
        growth=mean_growth([turn.total_tokens for turn in turns]),
    )
