"""Which sampling arguments a provider's model takes: pure rules, no SDK and no HTTP, so they
are tested on their own (``tests/unit/test_llm_rules.py``)."""

from __future__ import annotations

from typing import Any

# Prefixes of the Claude models that take a temperature ("claude-sonnet-4-2" is the dated
# "claude-sonnet-4-20250514").
_TEMPERATURE_FAMILIES = (
    "claude-3",
    "claude-sonnet-4-0",
    "claude-opus-4-0",
    "claude-sonnet-4-2",
    "claude-opus-4-1",
    "claude-opus-4-2",
    "claude-sonnet-4-5",
    "claude-haiku-4-5",
    "claude-opus-4-5",
)

# OpenAI's reasoning models take max_completion_tokens and no temperature.
_REASONING_PREFIXES = ("o1", "o3", "o4", "gpt-5")

#: The smallest extended-thinking budget Anthropic accepts.
MIN_THINKING_BUDGET = 1_024


def accepts_temperature(model: str) -> bool:
    """Claude 3.x and 4.0–4.5 models take a temperature; later ones fix their own sampling."""
    return model.startswith(_TEMPERATURE_FAMILIES)


def is_reasoning_model(model: str) -> bool:
    return model.startswith(_REASONING_PREFIXES)


def anthropic_arguments(
    model: str, max_tokens: int, *, temperature: float, thinking: bool
) -> dict[str, Any]:
    """``messages.create``'s sampling arguments."""
    if thinking:
        # Extended thinking's budget comes out of max_tokens, so it is added on top; a
        # thinking model takes no temperature.
        budget = max(MIN_THINKING_BUDGET, max_tokens // 2)
        return {
            "max_tokens": max_tokens + budget,
            "thinking": {"type": "enabled", "budget_tokens": budget},
        }
    arguments: dict[str, Any] = {"max_tokens": max_tokens, "thinking": {"type": "disabled"}}
    if accepts_temperature(model):
        # Current SDKs no longer expose temperature; older models still take it.
        arguments["extra_body"] = {"temperature": temperature}
    return arguments


def openai_arguments(
    provider: str, model: str, max_tokens: int, *, temperature: float, thinking: bool
) -> dict[str, Any]:
    """``chat.completions.create``'s sampling arguments (OpenAI, DeepSeek, compatible)."""
    if is_reasoning_model(model):
        return {"max_completion_tokens": max_tokens}
    arguments: dict[str, Any] = {"max_tokens": max_tokens}
    if provider == "deepseek":
        # DeepSeek thinks by default; thinking mode also ignores temperature.
        kind = "enabled" if thinking else "disabled"
        arguments["extra_body"] = {"thinking": {"type": kind}}
        if thinking:
            return arguments
    arguments["temperature"] = temperature
    return arguments
