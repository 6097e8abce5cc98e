"""Recall over HTTP (docs/architecture.md, "Recall"): the session's compacted originals matching
a query, within a token budget, as ``compaction recall`` and the model's tool read them
(``producers.recall``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from compaction.gateway.deps import ProducersDep
from compaction.gateway.responses import Recall
from compaction.gateway.schemas import ERRORS
from compaction.producers.recall import DEFAULT_TOKENS, MAX_QUERY_CHARS, MAX_TOKENS, MIN_TOKENS

router = APIRouter(tags=["sessions"], responses=ERRORS)


@router.get("/api/sessions/{session_id}/recall")
def recall(
    ctx: ProducersDep,
    session_id: Annotated[str, Path(description="the session's id")],
    q: Annotated[
        str, Query(min_length=1, max_length=MAX_QUERY_CHARS, description="the words to find")
    ],
    max_tokens: Annotated[
        int,
        Query(
            alias="maxTokens",
            ge=MIN_TOKENS,
            le=MAX_TOKENS,
            description="the results' budget (estimated tokens)",
        ),
    ] = DEFAULT_TOKENS,
) -> Recall:
    """Search the messages compactions folded into a summary or pruned (never the live
    view): the matching originals, best first, redacted, within ``maxTokens``. An unknown
    session is 404."""
    return Recall.of(ctx.recall(session_id, q, max_tokens))
