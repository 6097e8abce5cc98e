"""Recall (docs/architecture.md, "Recall"): the agent reads back what a compaction folded away.
One home for Python (``Producers.recall``), HTTP (``GET /api/sessions/{id}/recall``), the
command line (``compaction recall``) and the model's tool (``compaction.tools``): the session's
compacted originals matching a query (``compaction.store.recall``), within a token budget."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from compaction.core.errors import InvalidRequest
from compaction.store.recall import RecallHit

if TYPE_CHECKING:  # producers/context.py imports this module
    from compaction.producers.context import Producers

#: the longest query searched (characters)
MAX_QUERY_CHARS = 500
#: the budget's bounds and default (estimated tokens)
MIN_TOKENS, MAX_TOKENS, DEFAULT_TOKENS = 50, 20_000, 2_000


def check_recall(query: str, max_tokens: int) -> str:
    """The query stripped; ``InvalidRequest`` when it is blank or too long, or the budget is
    out of bounds."""
    stripped = query.strip()
    if not stripped:
        raise InvalidRequest("recall needs a query: the words to look for")
    if len(stripped) > MAX_QUERY_CHARS:
        raise InvalidRequest(f"a recall query holds at most {MAX_QUERY_CHARS} characters")
    if not MIN_TOKENS <= max_tokens <= MAX_TOKENS:
        raise InvalidRequest(f"maxTokens must be between {MIN_TOKENS} and {MAX_TOKENS}")
    return stripped


def recall(
    ctx: Producers, session_id: str, query: str, max_tokens: int = DEFAULT_TOKENS
) -> dict[str, Any]:
    """The compacted originals of ``session_id`` matching ``query``, best first, within
    ``max_tokens``: ``{"sessionId", "query", "maxTokens", "matched", "tokens", "results"}``."""
    stripped = check_recall(query, max_tokens)
    found = ctx.store.recall(session_id, stripped, max_tokens, ctx.estimator)
    return {
        "sessionId": session_id,
        "query": stripped,
        "maxTokens": max_tokens,
        "matched": found.matched,
        "tokens": sum(hit.tokens for hit in found.hits),
        "results": [_hit(hit) for hit in found.hits],
    }


def _hit(hit: RecallHit) -> dict[str, Any]:
    return {
        "messageId": hit.message_id,
        "seq": hit.seq,
        "role": hit.role,
        "toolName": hit.tool_name,
        "content": hit.content,
        "truncated": hit.truncated,
    }


def as_text(answer: dict[str, Any]) -> str:
    """An answer as the text a model (or a terminal) reads: one block per original."""
    results = answer["results"]
    if not results:
        return f"No compacted message matches {answer['query']!r}."
    blocks = []
    for hit in results:
        role = hit["role"] + (f" ({hit['toolName']})" if hit["toolName"] else "")
        blocks.append(f"[message {hit['seq']}, {role}]\n{hit['content']}")
    shown = f"{len(results)} of {answer['matched']}"
    return f"Compacted originals matching {answer['query']!r} ({shown}):\n\n" + "\n\n".join(blocks)
