"""A channel's API key never shows (docs/architecture.md, "Logs and metrics"): not in the
reprs of what the store returns, not in any error the store raises nor its traceback; masked
where it is listed. On SQLite and on a real PostgreSQL database (the ``store`` fixture)."""

from __future__ import annotations

import traceback
from collections.abc import Callable

import pytest
from sqlalchemy import select

from compaction.core.errors import CompactionError
from compaction.store import Store
from compaction.store.models import ModelChannel
from compaction.store.records import mask
from tests.integration.helpers import KEY


def test_a_stored_key_never_shows_in_reprs(store: Store) -> None:
    added = store.add_channel(
        "aux", provider="anthropic", model="claude-haiku", api_key=KEY, auxiliary=True
    )
    store.set_default_channel(added.id)
    resolved = store.resolve_auxiliary(environ={})
    listed = store.list_channels()

    for config in (added, resolved, *listed):
        assert KEY not in repr(config) and KEY not in str(config)
        assert config.api_key is not None
        assert KEY not in repr(config.api_key) and KEY not in str(config.api_key)
        assert config.api_key.get_secret_value() == KEY
    assert KEY not in repr(listed) and KEY not in str(listed)

    with store.factory() as session:
        row = session.scalars(select(ModelChannel)).one()
        assert row.api_key == KEY  # stored as given
        assert KEY not in repr(row) and KEY not in str(row)
        assert "aux" in repr(row)

    # what an edit and a (forced) removal return
    edited = store.edit_channel(added.id, model="claude-haiku-2", api_key=KEY)
    removed = store.remove_channel(added.id, force=True)
    for change in (edited, removed):
        assert KEY not in repr(change) and KEY not in str(change)


def test_mask_shows_a_prefix_and_the_last_four_characters() -> None:
    shown = mask(KEY)
    assert shown.startswith(KEY[:3]) and shown.endswith(KEY[-4:])
    assert KEY[3:-4] not in shown and len(shown) < len(KEY) // 2
    # too short to show anything without giving most of it away
    assert "1234" not in mask("sk-1234")


def database_errors(store: Store) -> list[Callable[[], object]]:
    """Calls around a channel holding ``KEY`` that the store refuses."""
    channel = store.add_channel("keyed", provider="openai", model="gpt-4o", api_key=KEY)
    return [
        lambda: store.add_channel("keyed", provider="openai", model="gpt-4o", api_key=KEY),
        lambda: store.add_channel("keyed-2", provider="azure", model="gpt-4o", api_key=KEY),
        lambda: store.add_channel("x", provider="openai", model="m", api_key=KEY, api_key_env="V"),
        lambda: store.set_default_channel(channel.id),
        lambda: store.set_agent("a1", auxiliary_channel_id=channel.id),
        lambda: store.resolve_auxiliary("a1", environ={}),
        # editing and removing: refusals around the keyed channel
        lambda: store.edit_channel("keyed", provider="azure", api_key=KEY),
        lambda: store.edit_channel("keyed", api_key=KEY, clear_api_key=True),
        lambda: store.edit_channel("keyed", api_key=KEY, api_key_env="V"),
        lambda: store.edit_channel("keyed"),
        lambda: store.remove_channel("keyed-missing"),
        lambda: store.set_default_channel("keyed"),
        # the database itself refuses this one (model is NOT NULL): a DatabaseError
        lambda: store.add_channel("keyed-3", provider="openai", model=None, api_key=KEY),  # type: ignore[arg-type]
    ]


def test_no_error_message_raised_by_the_store_holds_the_key(store: Store) -> None:
    codes = []
    for call in database_errors(store):
        with pytest.raises(CompactionError) as caught:
            call()
        codes.append(caught.value.code)
        assert KEY not in str(caught.value) and KEY not in repr(caught.value)
        assert KEY not in caught.value.message
    assert "db_error" in codes and "invalid_request" in codes and "no_auxiliary_model" in codes


def test_no_traceback_of_a_store_error_holds_the_key(store: Store) -> None:
    for call in database_errors(store):
        with pytest.raises(CompactionError) as caught:
            call()
        assert KEY not in "".join(traceback.format_exception(caught.value))
