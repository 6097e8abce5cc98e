"""CompactionConfig (compaction/core/config.py; docs/architecture.md, "The algorithm")."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from compaction import CompactionConfig as PublicConfig
from compaction.core.config import CompactionConfig
from compaction.core.errors import CompactionError, InvalidConfig

# --------------------------------------------------------------------------- defaults


def test_public_name() -> None:
    assert PublicConfig is CompactionConfig


#: The seed's table of parameters.
SEED_TABLE: dict[str, Any] = {
    "threshold_percent": 70,
    "protect_first_n": 3,
    "tail_token_budget_ratio": 0.20,
    "summary_min_tokens": 2_000,
    "summary_max_tokens": 12_000,
    "summary_ratio": 0.20,
    "chars_per_token": 4,
}
#: This project's other defaults (docs/architecture.md, "Settings").
OTHER_DEFAULTS: dict[str, Any] = {
    "context_window": 200_000,
    "min_tail_messages": 3,
    "prune_min_chars": 200,
    "serialize_head_chars": 4_000,
    "serialize_tail_chars": 1_500,
    "min_summary_chars": 200,
    "ledger_max_tokens": 8_000,
    "summary_language": "auto",
    "token_estimator": "cjk",
    "redact_secrets": True,
}


@pytest.mark.parametrize("expected", [SEED_TABLE, OTHER_DEFAULTS], ids=["seed", "other"])
def test_defaults(expected: dict[str, Any]) -> None:
    config = CompactionConfig()
    assert {name: getattr(config, name) for name in expected} == expected


# --------------------------------------------------------------------------- arithmetic


def test_default_threshold_and_tail_budget() -> None:
    config = CompactionConfig()
    assert config.threshold_tokens == 140_000
    assert config.tail_token_budget == 28_000


@pytest.mark.parametrize(
    ("window", "percent", "ratio", "threshold", "tail"),
    [
        (128_000, 75, 0.20, 96_000, 19_200),
        (128_000, 75, 0.25, 96_000, 24_000),
        (1_001, 33, 0.20, 330, 66),  # 330.33 floors to 330
        (200_000, 95, 1.0, 190_000, 190_000),
        (8_192, 30, 0.5, 2_457, 1_228),  # 2457.6 -> 2457; 1228.5 -> 1228
    ],
)
def test_threshold_and_tail_arithmetic(
    window: int, percent: int, ratio: float, threshold: int, tail: int
) -> None:
    config = CompactionConfig(
        context_window=window, threshold_percent=percent, tail_token_budget_ratio=ratio
    )
    assert config.threshold_tokens == threshold
    assert config.tail_token_budget == tail
    assert isinstance(config.threshold_tokens, int)
    assert isinstance(config.tail_token_budget, int)


@pytest.mark.parametrize(
    ("compressed", "budget"),
    [
        (0, 2_000),
        (5_000, 2_000),
        (10_000, 2_000),
        (10_005, 2_001),
        (30_000, 6_000),
        (59_999, 11_999),
        (60_000, 12_000),
        (100_000, 12_000),
        (180_000, 12_000),  # issue 12: a 180k-token middle
    ],
)
def test_summary_budget(compressed: int, budget: int) -> None:
    config = CompactionConfig()
    assert config.summary_budget(compressed) == budget
    assert config.summary_budget(compressed) == max(2000, min(int(0.2 * compressed), 12000))


def test_summary_budget_uses_configured_values() -> None:
    config = CompactionConfig(summary_min_tokens=500, summary_max_tokens=1_000, summary_ratio=0.5)
    assert config.summary_budget(0) == 500
    assert config.summary_budget(1_500) == 750
    assert config.summary_budget(10_000) == 1_000


def test_estimator_follows_the_settings() -> None:
    assert CompactionConfig().estimator()("你好世界") == 4
    seed3 = CompactionConfig(token_estimator="seed", chars_per_token=3).estimator()
    assert seed3("你好世界") == 1
    assert seed3("abcdef") == 2


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({"threshold_percent": 29}, "threshold_percent"),
        ({"threshold_percent": 96}, "threshold_percent"),
        ({"protect_first_n": 0}, "protect_first_n"),
        ({"protect_first_n": 11}, "protect_first_n"),
        ({"tail_token_budget_ratio": 0}, "tail_token_budget_ratio"),
        ({"tail_token_budget_ratio": 1.5}, "tail_token_budget_ratio"),
        ({"summary_ratio": 0}, "summary_ratio"),
        ({"summary_min_tokens": 5_000, "summary_max_tokens": 4_000}, "summary_min_tokens"),
        ({"no_such_field": 1}, "no_such_field"),
        ({"summary_input_max_tokens": 3_999}, "summary_input_max_tokens"),
        ({"summary_input_max_tokens": 13_999}, "summary_input_max_tokens"),
        ({"summary_language": "fr"}, "summary_language"),
        ({"token_estimator": "tiktoken"}, "token_estimator"),
        ({"context_window": 999}, "context_window"),
        ({"chars_per_token": 0}, "chars_per_token"),
        ({"threshold_percent": "seventy"}, "threshold_percent"),
    ],
)
def test_invalid_values_raise_invalid_config(values: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidConfig) as info:
        CompactionConfig(**values)
    err = info.value
    assert isinstance(err, ValueError)
    assert isinstance(err, CompactionError)
    assert err.code == "invalid_config"
    text = str(err)
    assert "\n" not in text
    assert field in text
    assert text.startswith("invalid compaction config: ")


@pytest.mark.parametrize(
    "values",
    [
        {"threshold_percent": 30},
        {"threshold_percent": 95},
        {"protect_first_n": 1},
        {"protect_first_n": 10},
        {"tail_token_budget_ratio": 1.0},
        {"summary_min_tokens": 12_000, "summary_max_tokens": 12_000},
        {"summary_input_max_tokens": 14_000},
        {"summary_language": "zh"},
        {"summary_language": "en"},
        {"token_estimator": "seed"},
    ],
)
def test_edge_values_are_accepted(values: dict[str, Any]) -> None:
    config = CompactionConfig(**values)
    for name, value in values.items():
        assert getattr(config, name) == value


def test_input_cap_follows_summary_max() -> None:
    """The input cap must leave room for the running summary: summary_max + 2000."""
    CompactionConfig(summary_max_tokens=20_000, summary_input_max_tokens=22_000)
    with pytest.raises(InvalidConfig, match="summary_input_max_tokens"):
        CompactionConfig(summary_max_tokens=20_000, summary_input_max_tokens=21_999)


def test_config_is_frozen() -> None:
    config = CompactionConfig()
    with pytest.raises(ValidationError):
        config.threshold_percent = 80  # type: ignore[misc]
    assert config.threshold_percent == 70


def test_equal_configs_compare_and_hash_equal() -> None:
    a = CompactionConfig(threshold_percent=80)
    b = CompactionConfig(threshold_percent=80)
    assert a == b
    assert hash(a) == hash(b)
    assert a != CompactionConfig()
