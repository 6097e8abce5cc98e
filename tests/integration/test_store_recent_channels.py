"""``Store.recent_channels`` (store/channels.py): the channel list a gateway's turn chooses
from, kept a moment and read again once this store writes a channel (docs/benchmarks.md,
"Overheads"), on SQLite and on a real PostgreSQL database (the ``store`` fixture)."""

from __future__ import annotations

from compaction.store import Store
from tests.integration.helpers import KEY, aux


def names(store: Store) -> list[str]:
    return [c.name for c in store.recent_channels(60.0)]


def test_kept_until_this_store_writes_a_channel(store: Store) -> None:
    assert names(store) == []
    first = aux(store, "first", api_key=KEY)
    assert names(store) == ["first"]
    store.edit_channel(first, name="renamed")
    assert names(store) == ["renamed"]
    aux(store, "second", api_key=KEY)
    store.set_default_channel("second")
    assert names(store) == ["renamed", "second"]
    store.remove_channel(first, force=True)
    assert names(store) == ["second"] == [c.name for c in store.list_channels()]


def test_an_edit_by_another_process_shows_once_the_list_is_older_than_asked(
    store: Store,
) -> None:
    aux(store, "first", api_key=KEY)
    assert names(store) == ["first"]
    other = Store(store.factory)  # another process's store: its writes go unseen here
    aux(other, "second", api_key=KEY)
    assert names(store) == ["first"]
    assert [c.name for c in store.recent_channels(0.0)] == ["first", "second"]
