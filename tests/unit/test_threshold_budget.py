"""The fixed token budget (docs/architecture.md, "Settings"): one rule for the threshold in
tokens, read alike by the algorithm's config and a session's resolved context; the agent's
budget over ``COMPACTION_TOKEN_BUDGET``; out-of-range budgets refused."""

from __future__ import annotations

import pytest

from compaction.core.config import CompactionConfig, threshold_tokens
from compaction.core.errors import InvalidConfig
from compaction.service.context import resolve_context, token_budget
from compaction.service.settings import Settings
from compaction.store.records import AgentSettings, SessionInfo

INFO = SessionInfo("s1", "a1", None, 0, 0)


def agent(budget: int | None) -> AgentSettings:
    return AgentSettings("a1", None, None, None, "lossy", None, None, budget)


@pytest.mark.parametrize(
    ("window", "percent", "budget", "expected"),
    [
        (200_000, 70, None, 140_000),  # the percentage
        (200_000, 70, 50_000, 50_000),  # the budget, whatever the percentage
        (32_000, 70, 80_000, 32_000),  # never over the window
    ],
)
def test_the_one_rule(window: int, percent: int, budget: int | None, expected: int) -> None:
    assert threshold_tokens(window, percent, budget) == expected
    config = CompactionConfig(context_window=window, threshold_percent=percent, token_budget=budget)
    assert config.threshold_tokens == expected
    assert config.tail_token_budget == round(expected * config.tail_token_budget_ratio)


@pytest.mark.parametrize(
    ("system", "own", "value", "source"),
    [
        (None, None, None, "system"),
        (80_000, None, 80_000, "system"),
        (80_000, 30_000, 30_000, "agent"),
    ],
)
def test_the_agents_budget_over_the_systems(
    system: int | None, own: int | None, value: int | None, source: str
) -> None:
    settings = Settings(database_url="sqlite://", token_budget=system)
    inherited = token_budget(settings, agent(own))
    assert (inherited.value, inherited.source) == (value, source)
    context = resolve_context(settings, INFO, agent(own))
    assert context.threshold_tokens == (value or 140_000)
    # the worker's config is built from the context: the same threshold
    assert context.config(settings).threshold_tokens == context.threshold_tokens


def test_a_budget_under_1000_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPACTION_TOKEN_BUDGET", "999")
    with pytest.raises(InvalidConfig) as err:
        Settings(database_url="sqlite://")
    assert "token_budget" in err.value.message
    monkeypatch.setenv("COMPACTION_TOKEN_BUDGET", "80000")
    assert Settings(database_url="sqlite://").token_budget == 80_000


def test_compaction_is_on_unless_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings(database_url="sqlite://").enabled is True
    monkeypatch.setenv("COMPACTION_ENABLED", "false")
    assert Settings(database_url="sqlite://").enabled is False
