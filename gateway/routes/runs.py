"""Compaction runs over HTTP (docs/architecture.md, "The gateway"): a session's runs, one run,
and ``restore``, which undoes the session's latest standing run as ``compaction restore``."""

from __future__ import annotations

from typing import Annotated

import redis
from fastapi import APIRouter, Path

from compaction.gateway.deps import ProducersDep, StoreDep
from compaction.gateway.responses import Run, RunList
from compaction.gateway.schemas import ERRORS
from compaction.producers.views import run_row
from compaction.service import logs

router = APIRouter(tags=["runs"], responses=ERRORS)
log = logs.get_logger(__name__)

RunId = Annotated[int, Path(description="the run's id")]


@router.get("/api/sessions/{session_id}/runs")
def session_runs(store: StoreDep, session_id: str) -> RunList:
    """The session's runs, oldest first: succeeded, failed, skipped and restored ones."""
    return RunList(runs=[Run.of(run_row(run)) for run in store.runs(session_id)])


@router.get("/api/runs/{run_id}")
def get_run(store: StoreDep, run_id: RunId) -> Run:
    return Run.of(run_row(store.get_run(run_id)))


@router.post("/api/runs/{run_id}/restore")
def restore(ctx: ProducersDep, run_id: RunId) -> Run:
    """Undo a run: its messages visible again, pruned outputs whole, its summary hidden, a
    "restored" bubble in the display view. Only the session's latest standing run can be
    undone (400 otherwise). The session's consoles get a ``token_update``."""
    run = ctx.store.get_run(run_id)  # 404 before the restore's own 400s
    restored = ctx.store.restore(run.id)
    try:
        ctx.publish_token_update(restored.session_id)
    except redis.RedisError as err:  # restored already; the bar catches up on the next turn
        log.warning("token_update after restore not published", error=type(err).__name__)
    return Run.of(run_row(restored))
