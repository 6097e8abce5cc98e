"""Context windows of current models (docs/architecture.md, "Settings"): one registry for
every layer. Unknown models fall back to the agent's window, then to the setting.

Matching is by longest prefix, so dated names (``claude-sonnet-4-5-20250929``) and provider
prefixes (``anthropic/``, ``openai/``) resolve too.
"""

from __future__ import annotations

from collections.abc import Mapping

MODEL_WINDOWS: dict[str, int] = {
    # Anthropic
    "claude-3-haiku": 200_000,
    "claude-3-5-haiku": 200_000,
    "claude-3-5-sonnet": 200_000,
    "claude-3-7-sonnet": 200_000,
    "claude-sonnet-4": 200_000,
    "claude-opus-4": 200_000,
    "claude-haiku-4-5": 200_000,
    "claude-sonnet-4-5": 200_000,
    "claude-opus-4-5": 200_000,
    # OpenAI
    "gpt-4o": 128_000,
    "gpt-4o-mini": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-4.1-mini": 1_047_576,
    "gpt-4.1-nano": 1_047_576,
    "gpt-5": 400_000,
    "gpt-5-mini": 400_000,
    "gpt-5-nano": 400_000,
    "o3": 200_000,
    "o3-mini": 200_000,
    "o4-mini": 200_000,
    # DeepSeek
    "deepseek-chat": 128_000,
    "deepseek-reasoner": 128_000,
}


def context_window(model: str | None, overrides: Mapping[str, int] | None = None) -> int | None:
    """The window of ``model`` (overrides first), or None when it is not known."""
    if not model:
        return None
    table = {**MODEL_WINDOWS, **(overrides or {})}
    name = model.rsplit("/", 1)[-1].lower()
    best = max((p for p in table if name.startswith(p.lower())), key=len, default=None)
    return table[best] if best is not None else None
