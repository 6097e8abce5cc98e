"""The context bar's figures a run sends after its final ``compaction_done``
(docs/architecture.md, "Events": ``token_update``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import redis

from compaction.core import CompactionResult
from compaction.core.contract import ContextUsage, TokenUpdate
from compaction.core.errors import CompactionError
from compaction.service import logs
from compaction.service.gate import session_warning
from compaction.service.usage import last_usage

if TYPE_CHECKING:
    from compaction.worker.pipeline import JobRun, Loaded

log = logs.get_logger("compaction.job")


def token_update(job: JobRun, loaded: Loaded, result: CompactionResult) -> TokenUpdate:
    """The context bar's figures after the run: the user's model usage as the gateway last
    reported it, the compacted context, the session's standing compactions."""
    runtime, session_id = job.runtime, job.request.session_id
    window = loaded.context.window
    return TokenUpdate(
        current=last_usage(runtime.redis, runtime.settings.channel_prefix, session_id),
        context=ContextUsage(
            used_tokens=result.tokens_after,
            max_tokens=window,
            percent=round(100 * result.tokens_after / window, 1),
            threshold_percent=loaded.config.threshold_percent,
            compactions=runtime.store.compaction_counts([session_id]).get(session_id, 0),
        ),
        # still past the warning level after the run (docs/architecture.md, "The gate")
        warning=session_warning(runtime.store, loaded.context, result.tokens_after),
        **job.event_fields(),
    )


def publish_token_update(job: JobRun, loaded: Loaded, result: CompactionResult) -> None:
    """Best effort, after ``compaction_done``: the compaction is written and announced, so a
    figure that cannot be read now leaves the bar as it was, never a failure."""
    try:
        update = token_update(job, loaded, result)
    except (CompactionError, redis.RedisError) as err:
        log.warning("token_update not sent", session=job.request.session_id, error=str(err)[:300])
        return
    job.runtime.publisher.publish(update)
