"""Agent compaction settings in the store (docs/architecture.md, "Tables", "Settings"): blank
values (the system's), clearing, ranges, the auxiliary channel override; on SQLite and on a real
PostgreSQL database (the ``store`` fixture)."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import text, update
from sqlalchemy.exc import IntegrityError

from compaction.core.errors import InvalidRequest
from compaction.store import AgentSettings, Store
from compaction.store.models import Agent
from tests.integration.helpers import aux

# --- agent settings (docs/architecture.md, "Tables", "Settings") ---------------------------------


def compaction_knobs(settings: AgentSettings) -> tuple[int | None, int | None, str]:
    """The threshold, the protected head and the strategy."""
    return (
        settings.compaction_threshold_percent,
        settings.compaction_protect_first_n,
        settings.compaction_strategy,
    )


def test_a_new_agent_leaves_its_threshold_head_and_channel_to_the_system(store: Store) -> None:
    """Blank means inherit: ``None`` is the system setting (docs/architecture.md, "Settings")."""
    assert store.get_agent("a1") is None
    settings = store.set_agent("a1")
    assert settings == store.get_agent("a1")
    assert compaction_knobs(settings) == (None, None, "lossy")
    assert settings.auxiliary_model_channel_id is None

    store.create_agent("a2", name="Two", model="claude")
    # an import naming an agent that does not exist creates it the same way
    store.create_session("s1", agent_id="a3", add_missing_agent=True)
    for agent_id in ("a2", "a3"):
        created = store.get_agent(agent_id)
        assert created is not None
        assert compaction_knobs(created) == (None, None, "lossy")


def test_a_row_written_without_the_settings_leaves_them_blank(store: Store) -> None:
    with store.factory() as session, session.begin():
        session.execute(
            text("INSERT INTO agent (id, created_at) VALUES ('raw', CURRENT_TIMESTAMP)")
        )
    settings = store.get_agent("raw")
    assert settings is not None
    assert compaction_knobs(settings) == (None, None, "lossy")


def test_a_cleared_value_goes_back_to_the_system_and_the_rest_stays(store: Store) -> None:
    own = aux(store, "own")
    store.set_agent("a1", threshold_percent=80, protect_first_n=5, auxiliary_channel_id=own)

    cleared = store.set_agent("a1", clear_threshold=True)
    assert compaction_knobs(cleared) == (None, 5, "lossy")
    assert cleared.auxiliary_model_channel_id == own

    cleared = store.set_agent("a1", clear_protect_first_n=True, clear_auxiliary_channel=True)
    assert compaction_knobs(cleared) == (None, None, "lossy")
    assert cleared.auxiliary_model_channel_id is None
    assert store.get_agent("a1") == cleared
    # set again after a clear
    assert store.set_agent("a1", threshold_percent=55).compaction_threshold_percent == 55


@pytest.mark.parametrize(
    ("values", "mentions"),
    [
        ({"threshold_percent": 80, "clear_threshold": True}, "threshold"),
        ({"protect_first_n": 4, "clear_protect_first_n": True}, "protected head"),
        ({"auxiliary_channel_id": 1, "clear_auxiliary_channel": True}, "auxiliary channel"),
    ],
)
def test_a_value_given_and_cleared_at_once_is_refused(
    store: Store, values: dict[str, Any], mentions: str
) -> None:
    store.set_agent("a1", threshold_percent=60, protect_first_n=2)
    before = store.get_agent("a1")
    with pytest.raises(InvalidRequest, match=f"set the {mentions} or clear it, not both") as err:
        store.set_agent("a1", **values)
    assert err.value.code == "invalid_request"
    assert store.get_agent("a1") == before


@pytest.mark.parametrize("percent", [30, 35, 75, 95])
def test_thresholds_in_range_and_on_a_step_of_five_are_accepted(store: Store, percent: int) -> None:
    assert store.set_agent("a1", threshold_percent=percent).compaction_threshold_percent == percent
    stored = store.get_agent("a1")
    assert stored is not None and stored.compaction_threshold_percent == percent


@pytest.mark.parametrize("count", [1, 10])
def test_protected_heads_from_one_to_ten_are_accepted(store: Store, count: int) -> None:
    assert store.set_agent("a1", protect_first_n=count).compaction_protect_first_n == count


def test_the_longest_model_name_and_the_widest_window_a_request_carries_are_accepted(
    store: Store,
) -> None:
    settings = store.set_agent("a1", model="m" * 128, context_window=10_000_000)
    assert (settings.model, settings.context_window) == ("m" * 128, 10_000_000)
    assert store.get_agent("a1") == settings


REFUSED: list[tuple[dict[str, Any], tuple[str, ...]]] = [
    ({"threshold_percent": 29}, ("29", "30", "95")),
    ({"threshold_percent": 96}, ("96", "30", "95")),
    ({"threshold_percent": 72}, ("72", "steps of 5")),
    ({"threshold_percent": 25}, ("25", "30")),
    ({"threshold_percent": 0}, ("0", "30")),
    ({"threshold_percent": 100}, ("100", "95")),
    ({"protect_first_n": 0}, ("0", "1 to 10")),
    ({"protect_first_n": 11}, ("11", "1 to 10")),
    ({"protect_first_n": -1}, ("-1", "1 to 10")),
    ({"strategy": "lossless"}, ("lossless", "lossy")),
    ({"strategy": "LOSSY"}, ("LOSSY", "lossy")),
    ({"strategy": ""}, ("lossy",)),
    # a good value next to a bad one: nothing of the call is written
    ({"threshold_percent": 50, "protect_first_n": 11}, ("11",)),
    ({"threshold_percent": 50, "strategy": "lossless"}, ("lossless",)),
    ({"protect_first_n": 9, "threshold_percent": 96}, ("96",)),
    # what a compaction request of the agent would refuse later (its model, its window)
    ({"context_window": 999}, ("999", "1000")),
    ({"context_window": 10_000_001}, ("10000001", "10000000")),
    ({"model": "m" * 129}, ("128",)),
]


@pytest.mark.parametrize(("values", "mentions"), REFUSED)
def test_out_of_range_settings_are_refused_and_nothing_is_written(
    store: Store, values: dict[str, Any], mentions: tuple[str, ...]
) -> None:
    own = aux(store, "own")
    store.set_agent("a1", threshold_percent=80, protect_first_n=5, auxiliary_channel_id=own)
    before = store.get_agent("a1")

    with pytest.raises(InvalidRequest) as caught:
        store.set_agent("a1", **values)

    assert caught.value.code == "invalid_request"
    for word in mentions:
        assert word in caught.value.message
    assert store.get_agent("a1") == before
    # a refused first call creates no agent either
    with pytest.raises(InvalidRequest):
        store.set_agent("new-agent", **values)
    assert store.get_agent("new-agent") is None


def test_a_refused_channel_leaves_the_calls_other_settings_unwritten(store: Store) -> None:
    plain = store.add_channel("main", provider="openai", model="gpt-4o").id
    store.set_agent("a1", threshold_percent=80)
    before = store.get_agent("a1")

    with pytest.raises(InvalidRequest):
        store.set_agent("a1", threshold_percent=50, auxiliary_channel_id=plain)
    with pytest.raises(InvalidRequest):
        store.set_agent("a2", threshold_percent=50, auxiliary_channel_id=plain)

    assert store.get_agent("a1") == before
    assert store.get_agent("a2") is None


def test_set_agent_updates_only_what_it_is_given(store: Store) -> None:
    own = aux(store, "own")
    store.set_agent("a1", threshold_percent=85, protect_first_n=2, auxiliary_channel_id=own)
    settings = store.set_agent("a1", protect_first_n=7)
    assert (
        settings.compaction_threshold_percent,
        settings.compaction_protect_first_n,
        settings.auxiliary_model_channel_id,
    ) == (85, 7, own)
    assert store.get_agent("a1") == settings


BAD_COLUMNS: list[dict[str, Any]] = [
    {"compaction_threshold_percent": 29},
    {"compaction_threshold_percent": 96},
    {"compaction_threshold_percent": 72},
    {"compaction_protect_first_n": 0},
    {"compaction_protect_first_n": 11},
    {"compaction_strategy": "lossless"},
]


@pytest.mark.parametrize("values", BAD_COLUMNS)
def test_the_database_refuses_a_bad_new_agent(store: Store, values: dict[str, Any]) -> None:
    with store.factory() as session:
        session.add(Agent(id="direct", **values))
        with pytest.raises(IntegrityError):
            session.commit()
    assert store.get_agent("direct") is None


@pytest.mark.parametrize("values", BAD_COLUMNS)
def test_the_database_refuses_a_bad_update(store: Store, values: dict[str, Any]) -> None:
    store.set_agent("a1", threshold_percent=55)
    before = store.get_agent("a1")
    with store.factory() as session:
        with pytest.raises(IntegrityError):
            session.execute(update(Agent).where(Agent.id == "a1").values(**values))
        session.rollback()
    assert store.get_agent("a1") == before


def test_the_database_accepts_the_bounds(store: Store) -> None:
    with store.factory() as session, session.begin():
        session.add(Agent(id="low", compaction_threshold_percent=30, compaction_protect_first_n=1))
        session.add(
            Agent(id="high", compaction_threshold_percent=95, compaction_protect_first_n=10)
        )
    low, high = store.get_agent("low"), store.get_agent("high")
    assert low is not None and high is not None
    assert (low.compaction_threshold_percent, low.compaction_protect_first_n) == (30, 1)
    assert (high.compaction_threshold_percent, high.compaction_protect_first_n) == (95, 10)
