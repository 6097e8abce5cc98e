"""``resolve_context``: the one rule for a session's model, window, threshold and protected head
(docs/architecture.md, "Settings")."""

from __future__ import annotations

import pytest

from compaction.service.context import resolve_context
from compaction.service.settings import Settings
from compaction.store.records import AgentSettings, SessionInfo


def info(model: str | None = None, agent_id: str | None = None) -> SessionInfo:
    return SessionInfo("s1", agent_id, model, 0, 0)


def agent(
    model: str | None = None,
    window: int | None = None,
    threshold: int = 60,
    protect: int = 5,
) -> AgentSettings:
    return AgentSettings("a1", model, window, None, "lossy", threshold, protect)


SETTINGS = Settings(
    database_url="sqlite://",
    context_window=100_000,
    threshold_percent=80,
    protect_first_n=2,
    model_windows={"acme-tiny": 8_000, "gpt-4o": 64_000},
)


@pytest.mark.parametrize(
    ("session_model", "the_agent", "request_model", "request_window", "window"),
    [
        (None, None, None, None, 100_000),  # the settings
        (None, agent(window=50_000), None, None, 50_000),  # the agent's window
        ("acme-tiny", agent(window=50_000), None, None, 8_000),  # MODEL_WINDOWS over the agent
        ("gpt-4o", None, None, None, 64_000),  # MODEL_WINDOWS over the built-in registry
        ("claude-sonnet-4-5", None, None, None, 200_000),  # the built-in registry
        (None, agent(model="acme-tiny"), None, None, 8_000),  # the agent's model
        ("claude-sonnet-4-5", None, "acme-tiny", None, 8_000),  # the request's model
        ("claude-sonnet-4-5", None, None, 12_345, 12_345),  # the request's window
    ],
)
def test_window_resolution_order(
    session_model: str | None,
    the_agent: AgentSettings | None,
    request_model: str | None,
    request_window: int | None,
    window: int,
) -> None:
    context = resolve_context(
        SETTINGS,
        info(session_model, "a1" if the_agent else None),
        the_agent,
        model=request_model,
        window=request_window,
    )
    assert context.window == window


def test_threshold_and_head_from_the_agent_else_the_settings() -> None:
    with_agent = resolve_context(SETTINGS, info(agent_id="a1"), agent(threshold=60, protect=5))
    without = resolve_context(SETTINGS, info(), None)
    assert (with_agent.threshold_percent, with_agent.protect_first_n) == (60, 5)
    assert (without.threshold_percent, without.protect_first_n) == (80, 2)
    assert without.threshold_tokens == 80_000
