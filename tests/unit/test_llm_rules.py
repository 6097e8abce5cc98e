"""Which sampling arguments each provider's model takes (worker/llm/rules.py): the rules alone,
no SDK and no HTTP. What the SDKs then put on the wire is checked against the fake provider
in tests/integration/test_worker_jobs.py."""

from __future__ import annotations

import pytest

from compaction.worker.llm.rules import (
    MIN_THINKING_BUDGET,
    accepts_temperature,
    anthropic_arguments,
    is_reasoning_model,
    openai_arguments,
)

OLD_CLAUDE = "claude-sonnet-4-5"
NEW_CLAUDE = "claude-opus-4-6"


@pytest.mark.parametrize(
    "model",
    [
        "claude-3-5-haiku-20241022",
        "claude-3-opus-20240229",
        "claude-sonnet-4-20250514",
        "claude-sonnet-4-0",
        "claude-opus-4-20250514",
        "claude-opus-4-1-20250805",
        "claude-sonnet-4-5-20250929",
        "claude-haiku-4-5",
        "claude-opus-4-5",
    ],
)
def test_claude_3_to_4_5_take_a_temperature(model: str) -> None:
    assert accepts_temperature(model)


@pytest.mark.parametrize(
    "model", ["claude-opus-4-6", "claude-sonnet-4-6", "claude-sonnet-5", "claude-2.1", "sonnet"]
)
def test_other_claude_models_take_none(model: str) -> None:
    assert not accepts_temperature(model)


@pytest.mark.parametrize("model", ["o1", "o1-mini", "o3-mini", "o4-mini", "gpt-5", "gpt-5-mini"])
def test_reasoning_models(model: str) -> None:
    assert is_reasoning_model(model)


@pytest.mark.parametrize("model", ["gpt-4o-mini", "gpt-4.1", "deepseek-chat", "qwen2.5-7b"])
def test_chat_models_are_not_reasoning_models(model: str) -> None:
    assert not is_reasoning_model(model)


# --- Anthropic -----------------------------------------------------------------------------


def test_anthropic_sends_the_temperature_to_a_model_that_takes_one() -> None:
    assert anthropic_arguments(OLD_CLAUDE, 2_000, temperature=0.3, thinking=False) == {
        "max_tokens": 2_000,
        "thinking": {"type": "disabled"},
        "extra_body": {"temperature": 0.3},
    }


def test_anthropic_sends_no_temperature_to_a_model_that_fixes_its_own() -> None:
    assert anthropic_arguments(NEW_CLAUDE, 2_000, temperature=0.3, thinking=False) == {
        "max_tokens": 2_000,
        "thinking": {"type": "disabled"},
    }


@pytest.mark.parametrize("model", [OLD_CLAUDE, NEW_CLAUDE])
def test_anthropic_thinking_adds_its_budget_and_drops_the_temperature(model: str) -> None:
    assert anthropic_arguments(model, 4_000, temperature=0.3, thinking=True) == {
        "max_tokens": 6_000,
        "thinking": {"type": "enabled", "budget_tokens": 2_000},
    }


def test_anthropic_thinking_budget_has_a_floor() -> None:
    arguments = anthropic_arguments(OLD_CLAUDE, 500, temperature=0.3, thinking=True)
    assert arguments["thinking"]["budget_tokens"] == MIN_THINKING_BUDGET
    assert arguments["max_tokens"] == 500 + MIN_THINKING_BUDGET


# --- OpenAI, DeepSeek and compatible endpoints ---------------------------------------------


@pytest.mark.parametrize("provider", ["openai", "openai-compatible"])
@pytest.mark.parametrize("thinking", [False, True])
def test_chat_models_take_max_tokens_and_the_temperature(provider: str, thinking: bool) -> None:
    # the thinking setting is DeepSeek's alone: other endpoints are sent what they always were
    arguments = openai_arguments(provider, "gpt-4o-mini", 900, temperature=0.7, thinking=thinking)
    assert arguments == {"max_tokens": 900, "temperature": 0.7}


@pytest.mark.parametrize("thinking", [False, True])
def test_reasoning_models_take_max_completion_tokens_only(thinking: bool) -> None:
    arguments = openai_arguments("openai", "o3-mini", 900, temperature=0.7, thinking=thinking)
    assert arguments == {"max_completion_tokens": 900}


def test_deepseek_is_told_not_to_think_and_takes_the_temperature() -> None:
    arguments = openai_arguments("deepseek", "deepseek-chat", 900, temperature=0.7, thinking=False)
    assert arguments == {
        "max_tokens": 900,
        "extra_body": {"thinking": {"type": "disabled"}},
        "temperature": 0.7,
    }


def test_deepseek_thinking_drops_the_temperature() -> None:
    arguments = openai_arguments("deepseek", "deepseek-chat", 900, temperature=0.7, thinking=True)
    assert arguments == {"max_tokens": 900, "extra_body": {"thinking": {"type": "enabled"}}}
