"""Auxiliary model channels in the store (docs/architecture.md, "Tables"): resolution and adding
channels, on SQLite and on a real PostgreSQL database (the ``store`` fixture). Agent settings:
test_store_agents.py; the key's secrecy: test_store_channel_secrets.py."""

from __future__ import annotations

import pytest
from sqlalchemy import text, update
from sqlalchemy.exc import IntegrityError

from compaction.core.errors import InvalidRequest, NoAuxiliaryModel
from compaction.store import Store
from compaction.store.models import PROVIDERS, ModelChannel
from tests.integration.helpers import KEY, aux

ENV_KEY = "sk-env-Hj5Lk9Pq2Ws7Xe4Rt1Yu8Io3"
ENV_VAR = "TEST_AUX_API_KEY"  # a name the key rule lets a channel read (store/channels.py)


# --- resolution (docs/architecture.md, "Settings") ------------------------------------------------


def test_the_agents_own_channel_wins_over_the_default(store: Store) -> None:
    default = aux(store, "default", api_key="sk-default-000000000000", default=True)
    own = aux(store, "own", provider="deepseek", model="deepseek-chat", api_key=KEY)
    store.create_agent("a1")
    store.set_agent("a1", auxiliary_channel_id=own)

    config = store.resolve_auxiliary("a1", environ={})

    assert (config.id, config.name, config.provider, config.model) == (
        own,
        "own",
        "deepseek",
        "deepseek-chat",
    )
    assert config.api_key is not None and config.api_key.get_secret_value() == KEY
    assert store.default_channel_id() == default


def test_without_its_own_channel_an_agent_gets_the_default(store: Store) -> None:
    aux(store, "other")
    default = aux(store, "default", api_key=KEY, default=True)
    store.set_agent("a1", threshold_percent=80)

    assert store.resolve_auxiliary("a1", environ={}).id == default
    # an unknown agent and no agent at all fall back the same way
    assert store.resolve_auxiliary("nobody", environ={}).id == default
    assert store.resolve_auxiliary(None, environ={}).id == default


def test_set_default_channel_makes_and_moves_the_default(store: Store) -> None:
    first, second = aux(store, "first"), aux(store, "second")
    assert store.default_channel_id() is None

    store.set_default_channel(first)
    assert store.default_channel_id() == first
    assert store.resolve_auxiliary(environ={}).id == first

    store.set_default_channel(second)  # updates the one dict_info row
    assert store.default_channel_id() == second
    assert store.resolve_auxiliary(environ={}).id == second
    with store.factory() as session:
        rows = session.execute(
            text("SELECT name, value FROM dict_info WHERE name = 'default_auxiliary_channel_id'")
        ).all()
    assert [tuple(r) for r in rows] == [("default_auxiliary_channel_id", str(second))]


def test_clearing_the_agents_channel_falls_back_to_the_default(store: Store) -> None:
    own, default = aux(store, "own"), aux(store, "default", default=True)
    store.set_agent("a1", auxiliary_channel_id=own)
    assert store.resolve_auxiliary("a1", environ={}).id == own

    settings = store.set_agent("a1", clear_auxiliary_channel=True)

    assert settings.auxiliary_model_channel_id is None
    assert store.resolve_auxiliary("a1", environ={}).id == default


@pytest.mark.parametrize("agent_id", [None, "a1", "unknown-agent"])
def test_no_agent_channel_and_no_default_is_no_auxiliary_model(
    store: Store, agent_id: str | None
) -> None:
    store.set_agent("a1")
    # channels exist, but none is auxiliary and none is the default
    store.add_channel("main", provider="openai", model="gpt-4o", api_key=KEY)
    aux(store, "unused-aux")

    with pytest.raises(NoAuxiliaryModel) as caught:
        store.resolve_auxiliary(agent_id, environ={})

    assert caught.value.code == "no_auxiliary_model"
    assert "auxiliary" in caught.value.message
    assert "compaction " not in caught.value.message  # each screen names its own fix
    assert KEY not in str(caught.value)


def test_only_auxiliary_channels_can_be_set_on_an_agent_or_as_default(store: Store) -> None:
    plain = store.add_channel("main", provider="openai", model="gpt-4o", api_key=KEY).id
    store.set_agent("a1", threshold_percent=60)
    before = store.get_agent("a1")

    with pytest.raises(InvalidRequest, match="not an auxiliary channel") as on_agent:
        store.set_agent("a1", auxiliary_channel_id=plain)
    with pytest.raises(InvalidRequest, match="not an auxiliary channel"):
        store.set_agent("a1", auxiliary_channel_id=9_999)  # no such channel
    with pytest.raises(InvalidRequest, match="not an auxiliary channel") as as_default:
        store.set_default_channel(plain)
    with pytest.raises(InvalidRequest, match="no channel 9999"):
        store.set_default_channel(9_999)
    with pytest.raises(InvalidRequest, match="only an auxiliary channel"):
        store.add_channel("main-2", provider="openai", model="gpt-4o", default=True)

    assert on_agent.value.code == as_default.value.code == "invalid_request"
    assert store.get_agent("a1") == before
    assert store.default_channel_id() is None
    assert [c.name for c in store.list_channels()] == ["main"]
    with pytest.raises(NoAuxiliaryModel):
        store.resolve_auxiliary("a1", environ={})


def test_a_channel_that_stops_being_auxiliary_no_longer_resolves(store: Store) -> None:
    own = aux(store, "own", api_key=KEY)
    store.set_agent("a1", auxiliary_channel_id=own)
    with store.factory() as session, session.begin():
        session.execute(update(ModelChannel).values(is_auxiliary=False))

    with pytest.raises(NoAuxiliaryModel, match="not an auxiliary channel") as caught:
        store.resolve_auxiliary("a1", environ={})
    assert KEY not in str(caught.value)


def test_a_key_held_in_a_variable_is_read_from_the_environ_given(store: Store) -> None:
    channel = aux(store, "env", provider="openai-compatible", api_key_env=ENV_VAR, default=True)

    config = store.resolve_auxiliary(environ={ENV_VAR: ENV_KEY, "OTHER": "x"})

    assert config.id == channel
    assert config.api_key_env == ENV_VAR
    assert config.api_key is not None and config.api_key.get_secret_value() == ENV_KEY
    assert ENV_KEY not in repr(config) and ENV_KEY not in str(config)
    # the variable's value is not stored: the listed channel has no key
    (listed,) = store.list_channels()
    assert listed.api_key is None and listed.api_key_env == ENV_VAR


@pytest.mark.parametrize("environ", [{}, {ENV_VAR: ""}, {"OTHER_VAR": ENV_KEY}])
def test_a_missing_variable_is_no_auxiliary_model_naming_the_variable(
    store: Store, environ: dict[str, str]
) -> None:
    aux(store, "stored", api_key=KEY)
    own = aux(store, "env", api_key_env=ENV_VAR)
    store.set_agent("a1", auxiliary_channel_id=own)

    with pytest.raises(NoAuxiliaryModel) as caught:
        store.resolve_auxiliary("a1", environ=environ)

    message = str(caught.value)
    assert caught.value.code == "no_auxiliary_model"
    assert ENV_VAR in message
    assert KEY not in message and ENV_KEY not in message
    assert KEY not in repr(caught.value) and ENV_KEY not in repr(caught.value)


def test_a_stored_key_is_used_as_is_whatever_the_environ_holds(store: Store) -> None:
    aux(store, "stored", api_key=KEY, default=True)
    config = store.resolve_auxiliary(environ={ENV_VAR: ENV_KEY})
    assert config.api_key is not None and config.api_key.get_secret_value() == KEY


# --- adding channels (docs/architecture.md, "Tables") ---------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_known_provider_is_accepted(store: Store, provider: str) -> None:
    config = store.add_channel(
        f"ch-{provider}",
        provider=provider,
        model="m",
        base_url="https://llm.example/v1",
        api_key_env="SOME_API_KEY",
    )
    assert (config.provider, config.base_url, config.is_auxiliary) == (
        provider,
        "https://llm.example/v1",
        False,
    )
    assert store.list_channels() == [config]


@pytest.mark.parametrize("provider", ["azure", "", "OpenAI", "gemini"])
def test_an_unknown_provider_is_refused(store: Store, provider: str) -> None:
    with pytest.raises(InvalidRequest, match="unknown provider") as caught:
        store.add_channel("c", provider=provider, model="m", api_key=KEY)
    assert caught.value.code == "invalid_request"
    assert KEY not in str(caught.value)
    assert store.list_channels() == []


def test_the_database_refuses_an_unknown_provider(store: Store) -> None:
    with store.factory() as session:
        session.add(ModelChannel(name="direct", provider="azure", model="m"))
        with pytest.raises(IntegrityError):
            session.commit()
    assert store.list_channels() == []


def test_a_duplicate_channel_name_is_refused(store: Store) -> None:
    first = store.add_channel("shared", provider="openai", model="gpt-4o", api_key=KEY)
    with pytest.raises(InvalidRequest, match="'shared' exists already") as caught:
        store.add_channel("shared", provider="deepseek", model="deepseek-chat", auxiliary=True)
    assert caught.value.code == "invalid_request"
    assert store.list_channels() == [first]


def test_a_key_and_a_key_variable_together_are_refused(store: Store) -> None:
    with pytest.raises(InvalidRequest, match="not both") as caught:
        store.add_channel("c", provider="openai", model="m", api_key=KEY, api_key_env=ENV_VAR)
    assert KEY not in str(caught.value)
    assert store.list_channels() == []


def test_add_channel_as_default_sets_the_default_in_the_same_call(store: Store) -> None:
    config = store.add_channel(
        "aux", provider="anthropic", model="claude-haiku", auxiliary=True, default=True
    )
    assert config.is_auxiliary
    assert store.default_channel_id() == config.id
    assert store.resolve_auxiliary(environ={}) == config
    # a later default replaces it
    later = store.add_channel("aux-2", provider="openai", model="m", auxiliary=True, default=True)
    assert store.default_channel_id() == later.id
    assert store.resolve_auxiliary(environ={}) == later
