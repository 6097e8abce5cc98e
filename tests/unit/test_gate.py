"""The gate before an automatic compaction (docs/architecture.md, "The gate"): the agent's
``autoCompact`` mode in the shared decision, the warning level and the estimate of turns left
(``compaction.core.gate``), and the settings' defaults."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from compaction.core.contract import AutoCompact, TokenUpdate
from compaction.core.decision import decide
from compaction.core.errors import InvalidConfig
from compaction.core.gate import (
    context_warning,
    hard_limit_reached,
    mean_growth,
    target_tokens,
    turns_left,
    warn_tokens,
)
from compaction.service.context import check_warn_level, resolve_context
from compaction.service.settings import Settings
from compaction.store.records import AgentSettings, SessionInfo

THRESHOLD, WINDOW = 700, 1_000


def _decide(mode: AutoCompact, tokens: int, *, busy: Any = None, asked: list[str]) -> str:
    def reader(name: str, answer: Any) -> Any:
        def read() -> Any:
            asked.append(name)
            return answer

        return read

    return decide(
        "auto",
        tokens,
        THRESHOLD,
        busy=reader("busy", busy),
        suppressed=reader("suppressed", False),
        first_stage=reader("stage", "history"),
        mode=mode,
        window=WINDOW,
    )


@pytest.mark.parametrize(
    ("mode", "tokens", "expected"),
    [
        ("on", 699, "below_threshold"),
        ("ask", 699, "below_threshold"),
        ("off", 699, "below_threshold"),
        ("on", 700, "history"),
        ("ask", 700, "asked"),
        ("off", 999, "manual_only"),
        # the hard limit: the call would not fit the window, compacted first in every mode
        ("ask", 1_000, "history"),
        ("off", 1_000, "history"),
        ("off", 5_000, "history"),
    ],
)
def test_auto_compact_modes_in_the_decision(mode: AutoCompact, tokens: int, expected: str) -> None:
    assert _decide(mode, tokens, asked=[]) == expected


def test_a_held_request_still_waits_for_one_queued() -> None:
    """A turn of an ``ask`` session over the threshold while the user's ``/compact`` is queued
    waits for it, as in ``on`` mode; the anti-loop rule and the segments are not read."""
    asked: list[str] = []
    assert _decide("ask", 800, busy="already_pending", asked=asked) == "already_pending"
    asked.clear()
    assert _decide("off", 800, asked=asked) == "manual_only"
    assert asked == ["busy"]


def test_manual_requests_run_in_every_mode() -> None:
    for mode in ("ask", "off"):
        decided = decide(
            "manual",
            10,
            THRESHOLD,
            busy=lambda: None,
            suppressed=lambda: True,
            first_stage=lambda: "loop",
            mode=mode,
            window=WINDOW,
        )
        assert decided == "loop"


def test_the_worker_passes_no_mode() -> None:
    """The worker runs what the producers queued (an ask session's request at the hard limit)."""
    decided = decide("auto", 800, THRESHOLD, suppressed=lambda: False, first_stage=lambda: "loop")
    assert decided == "loop"


def test_hard_limit() -> None:
    assert not hard_limit_reached(999, 1_000)
    assert hard_limit_reached(1_000, 1_000)


@pytest.mark.parametrize(
    ("window", "threshold", "warn", "expected"),
    [
        (1_000, 700, None, 600),  # 10 points below 70%
        (200_000, 140_000, None, 120_000),
        (1_000, 700, 50, 500),
        (1_000, 700, 90, 700),  # never over the threshold
        (100_000, 30_000, None, 20_000),  # a fixed budget at 30%: 10 points of the window below
        (100_000, 5_000, None, 0),
    ],
)
def test_warn_tokens(window: int, threshold: int, warn: int | None, expected: int) -> None:
    assert warn_tokens(window, threshold, warn) == expected


@pytest.mark.parametrize(
    ("totals", "expected"),
    [
        ([], None),
        ([500], None),
        ([600, 500], 100.0),
        ([700, 600, 550], 75.0),
        # a compaction between two calls is a drop, not growth
        ([300, 200, 900, 800], 100.0),
        ([300, 900], None),
        # only the latest turns: 6 totals give the 5 newest growths
        ([160, 150, 140, 130, 120, 110, 0], 10.0),
    ],
)
def test_mean_growth(totals: list[int], expected: float | None) -> None:
    assert mean_growth(totals) == expected


def test_turns_left() -> None:
    assert turns_left(600, 700, 50.0) == 2
    assert turns_left(600, 700, 30.0) == 4  # 690 after three, the fourth reaches it
    assert turns_left(750, 700, 30.0) == 0
    assert turns_left(600, 700, None) is None
    assert turns_left(600, 700, 0.0) is None


def test_target_is_the_threshold_then_the_window() -> None:
    assert target_tokens(600, 700, 1_000, "on") == 700
    assert target_tokens(600, 700, 1_000, "ask") == 700
    assert target_tokens(800, 700, 1_000, "ask") == 1_000
    assert target_tokens(600, 700, 1_000, "off") == 1_000


def test_the_warning() -> None:
    def warning(used: int, mode: AutoCompact = "on", growth: float | None = 50.0) -> Any:
        return context_warning(
            used_tokens=used,
            window=WINDOW,
            threshold_tokens=THRESHOLD,
            warn_percent=None,
            mode=mode,
            growth=growth,
        )

    assert warning(599) is None
    at = warning(600)
    assert (at.percent, at.threshold, at.turns_left, at.mode, at.due) == (60, 70, 2, "on", False)
    assert warning(600, growth=None).turns_left is None
    due = warning(750, "ask")
    assert due.due and due.turns_left == 5  # to the hard limit
    assert not warning(750, "off").due
    wire = TokenUpdate.model_validate(
        {
            "sessionId": "s",
            "context": {
                "usedTokens": 600,
                "maxTokens": 1000,
                "percent": 60,
                "thresholdPercent": 70,
            },
            "warning": at.model_dump(),
        }
    ).to_wire()
    assert wire["warning"] == {
        "percent": 60.0,
        "threshold": 70.0,
        "turnsLeft": 2,
        "mode": "on",
        "due": False,
    }


def test_defaults_are_the_seeds() -> None:
    """A user who touches nothing keeps ``autoCompact: on`` and a warning 10 points below."""
    settings = Settings(_env_file=None)
    assert settings.auto_compact == "on" and settings.warn_percent is None
    info = SessionInfo(id="s", agent_id=None, model=None, compaction_version=0, last_seq=0)
    context = resolve_context(settings, info, None, window=1_000)
    assert (context.auto_compact, context.warn_tokens) == ("on", 600)


def test_settings_refuse_a_warning_at_the_threshold() -> None:
    with pytest.raises(InvalidConfig, match=r"warn_percent \(70\) must be below"):
        Settings(_env_file=None, warn_percent=70)
    with pytest.raises(InvalidConfig):
        Settings(_env_file=None, auto_compact="sometimes")
    assert Settings(_env_file=None, warn_percent=65, auto_compact="ask").warn_percent == 65


def test_agents_inherit_and_are_checked() -> None:
    settings = Settings(_env_file=None, auto_compact="ask", warn_percent=50)
    agent = AgentSettings(
        id="a",
        model=None,
        context_window=None,
        auxiliary_model_channel_id=None,
        compaction_strategy="lossy",
        compaction_threshold_percent=40,
        compaction_protect_first_n=None,
    )
    with pytest.raises(InvalidConfig, match="warning level 50% must be below the threshold of 40%"):
        check_warn_level(settings, agent)
    own = replace(agent, warn_percent=35, auto_compact="off")
    check_warn_level(settings, own)
    info = SessionInfo(id="s", agent_id="a", model=None, compaction_version=0, last_seq=0)
    context = resolve_context(settings, info, own, window=1_000)
    assert (context.auto_compact, context.warn_tokens) == ("off", 350)
    inherited = resolve_context(settings, info, agent, window=1_000)
    assert (inherited.auto_compact, inherited.warn_tokens) == ("ask", 400)  # capped at 40%
