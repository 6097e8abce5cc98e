"""The recall tool (docs/architecture.md, "Recall"): a ready tool definition a gateway hands to
its model, in the OpenAI or the Anthropic format, and the one function that answers the model's
call from the database (``Producers.recall``).

    tools = [recall_tool("openai")]            # or "anthropic"
    ...the model calls it...
    text = run_tool_call(producers, session_id, call.name, call.arguments)

A bad call (unknown tool, arguments that are not JSON, a blank query) is answered with an
``error: …`` text for the model to read, never raised: the turn goes on.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from compaction.core.errors import CompactionError
from compaction.producers.context import Producers
from compaction.producers.recall import DEFAULT_TOKENS, MAX_QUERY_CHARS, MAX_TOKENS, as_text

RECALL = "recall"
Provider = Literal["openai", "anthropic"]

_DESCRIPTION = (
    "Search this conversation's earlier messages that were compacted into the summary (the "
    "originals: exact commands, file contents, errors, URLs, the user's words). Use it when "
    "the summary mentions something whose details you need. Returns the matching original "
    "messages, best first."
)
_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "description": "words to look for (identifiers, file names, error text)",
            "maxLength": MAX_QUERY_CHARS,
        },
        "max_tokens": {
            "type": "integer",
            "description": f"the most tokens to return (default {DEFAULT_TOKENS})",
            "minimum": 50,
            "maximum": MAX_TOKENS,
        },
    },
    "required": ["query"],
}


def recall_tool(provider: Provider) -> dict[str, Any]:
    """The recall tool's definition in ``provider``'s format (``tools=[...]`` of its SDK)."""
    if provider == "openai":
        return {
            "type": "function",
            "function": {"name": RECALL, "description": _DESCRIPTION, "parameters": _PARAMETERS},
        }
    if provider == "anthropic":
        return {"name": RECALL, "description": _DESCRIPTION, "input_schema": _PARAMETERS}
    raise ValueError(f"unknown provider {provider!r}: 'openai' or 'anthropic'")


def run_tool_call(
    producers: Producers, session_id: str, name: str, arguments: str | dict[str, Any]
) -> str:
    """The text answering the model's call of ``name`` with ``arguments`` (a JSON object, or
    its text as OpenAI gives it) in ``session_id``."""
    if name != RECALL:
        return f"error: unknown tool {name!r} (this gateway offers {RECALL!r})"
    try:
        args = json.loads(arguments or "{}") if isinstance(arguments, str) else arguments
    except json.JSONDecodeError:
        return "error: the arguments are not a JSON object"
    if not isinstance(args, dict) or not isinstance(args.get("query"), str):
        return 'error: give {"query": "words to look for"}'
    budget = args.get("max_tokens", DEFAULT_TOKENS)
    if not isinstance(budget, int) or isinstance(budget, bool):
        budget = DEFAULT_TOKENS
    try:
        return as_text(producers.recall(session_id, args["query"], budget))
    except CompactionError as err:
        return f"error: {err}"
