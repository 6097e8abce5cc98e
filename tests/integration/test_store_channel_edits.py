"""Managing model channels in the store (docs/architecture.md, "Settings"): edit, make default,
remove; a channel an agent uses, or the default one, is neither removed nor unmarked auxiliary
unless forced, and forcing lets the agents fall back to the default. On SQLite and on a real
PostgreSQL database (the ``store`` fixture). Adding and resolution: test_store_channels.py."""

from __future__ import annotations

from typing import Any

import pytest

from compaction.core.errors import InvalidRequest, NoAuxiliaryModel
from compaction.store import Store
from tests.integration.helpers import KEY, aux


def test_a_channel_is_found_by_id_or_name(store: Store) -> None:
    first = aux(store, "first")
    named_digits = aux(store, "42")  # a name made of digits is a name first
    assert store.get_channel(first).name == "first"
    assert store.get_channel("first").id == first
    assert store.get_channel(str(first)).id == first
    assert store.get_channel("42").id == named_digits
    for missing in ("nope", 9_999, "9999"):
        with pytest.raises(InvalidRequest, match="no channel") as caught:
            store.get_channel(missing)
        assert caught.value.code == "invalid_request"


def test_edit_changes_what_it_is_given_and_keeps_the_rest(store: Store) -> None:
    store.add_channel(
        "main", provider="openai", model="gpt-4o", base_url="https://a.example/v1", api_key=KEY
    )

    change = store.edit_channel("main", name="renamed", model="gpt-4o-mini", auxiliary=True)

    edited = change.channel
    assert (edited.name, edited.provider, edited.model, edited.base_url) == (
        "renamed",
        "openai",
        "gpt-4o-mini",
        "https://a.example/v1",
    )
    assert edited.is_auxiliary and edited.api_key is not None
    assert edited.api_key.get_secret_value() == KEY
    assert (change.released_agents, change.default_cleared) == ((), False)
    assert store.list_channels() == [edited]

    moved = store.edit_channel(
        edited.id, provider="deepseek", clear_base_url=True, api_key="sk-deepseek-0123456789"
    ).channel
    assert (moved.provider, moved.base_url) == ("deepseek", None)


def test_a_new_key_replaces_the_variable_and_the_other_way_round(store: Store) -> None:
    channel = aux(store, "aux", api_key=KEY)

    by_variable = store.edit_channel(channel, api_key_env="AUX_API_KEY").channel
    assert (by_variable.api_key, by_variable.api_key_env) == (None, "AUX_API_KEY")

    by_key = store.edit_channel(channel, api_key="sk-other-0000000000000000").channel
    assert by_key.api_key_env is None and by_key.api_key is not None

    cleared = store.edit_channel(channel, clear_api_key=True).channel
    assert (cleared.api_key, cleared.api_key_env) == (None, None)


EDITS_REFUSED: list[tuple[dict[str, Any], str]] = [
    ({}, "nothing to change"),
    ({"provider": "azure"}, "unknown provider"),
    ({"name": "other"}, "'other' exists already"),
    ({"api_key": KEY, "api_key_env": "V"}, "not both"),
    ({"api_key": KEY, "clear_api_key": True}, "set the key or clear it"),
    ({"base_url": "https://b.example", "clear_base_url": True}, "set the base URL or clear it"),
]


@pytest.mark.parametrize(("values", "message"), EDITS_REFUSED)
def test_a_refused_edit_changes_nothing(store: Store, values: dict[str, Any], message: str) -> None:
    aux(store, "aux", api_key="sk-first-000000000000000")
    aux(store, "other")
    before = store.list_channels()

    with pytest.raises(InvalidRequest, match=message) as caught:
        store.edit_channel("aux", **values)

    assert caught.value.code == "invalid_request"
    assert KEY not in str(caught.value)
    assert store.list_channels() == before


def test_a_channel_nobody_uses_is_unmarked_and_removed(store: Store) -> None:
    spare = aux(store, "spare")
    unmarked = store.edit_channel(spare, auxiliary=False)
    assert not unmarked.channel.is_auxiliary and unmarked.released_agents == ()

    removed = store.remove_channel("spare")

    assert removed.channel.id == spare and removed.released_agents == ()
    assert store.list_channels() == []


def in_use(store: Store) -> tuple[int, int]:
    """A default channel and another one that agents a1 and a2 use; a3 uses the default."""
    default = aux(store, "default", default=True)
    used = aux(store, "used")
    store.set_agent("a2", auxiliary_channel_id=used)
    store.set_agent("a1", auxiliary_channel_id=used)
    store.set_agent("a3")
    return default, used


@pytest.mark.parametrize(
    "call",
    [
        lambda store: store.remove_channel("used"),
        lambda store: store.edit_channel("used", auxiliary=False),
    ],
)
def test_a_channel_agents_use_is_kept_unless_forced(store: Store, call: Any) -> None:
    _, used = in_use(store)
    before = store.list_channels()

    with pytest.raises(InvalidRequest) as caught:
        call(store)

    message = caught.value.message
    assert caught.value.code == "invalid_request"
    assert "'used'" in message and "agents a1, a2 use it" in message
    assert "--force" in message and "fall back to the default channel" in message
    assert "\n" not in message
    assert store.list_channels() == before
    assert store.resolve_auxiliary("a1", environ={}).id == used


@pytest.mark.parametrize(
    "call",
    [
        lambda store: store.remove_channel("default"),
        lambda store: store.edit_channel("default", auxiliary=False),
    ],
)
def test_the_default_channel_is_kept_unless_forced(store: Store, call: Any) -> None:
    default, _ = in_use(store)

    with pytest.raises(InvalidRequest, match="it is the default auxiliary channel") as caught:
        call(store)

    assert "no default auxiliary channel until one is set" in caught.value.message
    assert store.default_channel_id() == default


def test_forced_removal_lets_the_agents_fall_back_to_the_default(store: Store) -> None:
    default, used = in_use(store)

    change = store.remove_channel(used, force=True)

    assert change.released_agents == ("a1", "a2")
    assert not change.default_cleared
    assert change.default is not None and change.default.id == default
    for agent_id in ("a1", "a2"):
        agent = store.get_agent(agent_id)
        assert agent is not None and agent.auxiliary_model_channel_id is None
        assert store.resolve_auxiliary(agent_id, environ={}).id == default
    assert [c.name for c in store.list_channels()] == ["default"]


def test_forced_unmarking_of_the_default_leaves_no_default(store: Store) -> None:
    default, used = in_use(store)
    store.set_agent("a3", auxiliary_channel_id=default)

    change = store.edit_channel("default", auxiliary=False, force=True)

    assert (change.released_agents, change.default_cleared, change.default) == (
        ("a3",),
        True,
        None,
    )
    assert not change.channel.is_auxiliary
    assert store.default_channel_id() is None
    assert store.resolve_auxiliary("a1", environ={}).id == used  # untouched
    with pytest.raises(NoAuxiliaryModel):
        store.resolve_auxiliary("a3", environ={})
    assert store.auxiliary_choice("a3").source == "none"
    # a new default: the agents without a channel of their own follow it
    store.set_default_channel("used")
    assert store.resolve_auxiliary("a3", environ={}).id == used


def test_set_default_by_name_and_the_refusals(store: Store) -> None:
    aux(store, "first", default=True)
    second = aux(store, "second")
    plain = store.add_channel("plain", provider="openai", model="m").id

    assert store.set_default_channel("second").id == second
    assert store.default_channel_id() == second
    with pytest.raises(InvalidRequest, match="'plain' is not an auxiliary channel"):
        store.set_default_channel(plain)
    with pytest.raises(InvalidRequest, match="no channel 'nope'"):
        store.set_default_channel("nope")
    assert store.default_channel_id() == second


def test_auxiliary_choice_says_where_the_channel_comes_from(store: Store) -> None:
    default, used = in_use(store)

    own, inherited = store.auxiliary_choice("a1"), store.auxiliary_choice("a3")

    assert (own.source, own.channel_id) == ("agent", used)
    assert own.channel is not None and own.channel.name == "used"
    assert (inherited.source, inherited.channel_id) == ("default", default)
    assert store.auxiliary_choice(None).source == "default"
