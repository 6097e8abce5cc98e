"""Sessions and appending (store/sessions.py; docs/architecture.md, "Tables"): ``seq``
assigned in order, one block per call even under concurrent appends, one batched INSERT; an
unknown session is ``session_not_found`` wherever it is named.

Every test runs against SQLite and against the real PostgreSQL database (``store`` fixture).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from sqlalchemy import Engine

from compaction.core.errors import SessionNotFound
from compaction.store import Store
from tests.fakes import conversation
from tests.integration.helpers import new_session, recorded


def test_append_assigns_consecutive_seq_and_returns_ids_in_order(store: Store) -> None:
    session_id = store.create_session()
    first = store.append_messages(session_id, conversation(2))
    second = store.append_messages(
        session_id,
        [{"role": "user", "content": "and now?"}, {"role": "assistant", "content": "done"}],
    )
    assert store.append_messages(session_id, []) == []

    ids = first + second
    assert len(first) == 9 and len(second) == 2
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    full = store.load_history(session_id, "full")
    assert [s.id for s in full] == ids
    assert [s.seq for s in full] == list(range(1, 12))
    assert all(s.seq_minor == 0 for s in full)
    assert store.get_session(session_id).last_seq == 11
    assert [s.message.content for s in full[-2:]] == ["and now?", "done"]


def test_one_append_is_one_batched_insert(store: Store, engine: Engine) -> None:
    """Regression: an ORM bulk INSERT leaves NULL columns out and so split a conversation into
    one INSERT per run of rows with the same NULL columns (user / assistant-with-calls / tool
    alternate), splicing the RETURNING results quadratically: 10,001 messages took ~10 s."""
    session_id = store.create_session()
    messages = conversation(250)
    with recorded(engine) as statements:
        ids = store.append_messages(session_id, messages)
    assert len(ids) == len(messages) == 1_001
    inserts = [s for s in statements if s.is_insert_into("message")]
    # One statement shape for every row (SQLite, whose RETURNING cannot be batched in
    # parameter order, may run it row by row; PostgreSQL batches it).
    assert len({s.normalized.partition(")")[0] for s in inserts}) == 1  # one column list
    if engine.dialect.name == "postgresql":
        assert len(inserts) <= 5


def test_concurrent_appends_get_distinct_consecutive_seqs(store: Store) -> None:
    session_id = store.create_session()
    barrier = threading.Barrier(4)
    results: dict[int, list[int]] = {}
    errors: list[BaseException] = []

    def append(writer: int) -> None:
        barrier.wait(timeout=10)
        try:
            results[writer] = store.append_messages(
                session_id, conversation(5, system=False, first_turn=writer * 10)
            )
        except BaseException as err:  # reported below
            errors.append(err)

    threads = [threading.Thread(target=append, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors and len(results) == 4
    full = store.load_history(session_id, "full")
    assert [s.seq for s in full] == list(range(1, 81))
    seq_of = {s.id: s.seq for s in full}
    for ids in results.values():
        seqs = [seq_of[i] for i in ids]
        assert seqs == list(range(seqs[0], seqs[0] + 20))  # one block per call, in order


def test_sessions_number_their_rows_independently(store: Store) -> None:
    a, _ = new_session(store, conversation(1))
    b, _ = new_session(store, conversation(2))
    store.append_messages(a, conversation(1, system=False, first_turn=1))
    assert [s.seq for s in store.load_history(a)] == list(range(1, 10))
    assert [s.seq for s in store.load_history(b)] == list(range(1, 10))


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.load_history("no-such-session"),
        lambda s: s.load_history("no-such-session", "full"),
        lambda s: s.latest_summary("no-such-session"),
        lambda s: s.get_session("no-such-session"),
        lambda s: s.append_messages("no-such-session", [{"role": "user", "content": "hi"}]),
        lambda s: s.append_event("no-such-session", "start", "Compacting"),
    ],
    ids=["compacted", "full", "latest_summary", "get_session", "append", "append_event"],
)
def test_unknown_session_is_session_not_found(
    store: Store, call: Callable[[Store], object]
) -> None:
    with pytest.raises(SessionNotFound) as err:
        call(store)
    assert err.value.code == "session_not_found"
    assert not store.session_exists("no-such-session")
