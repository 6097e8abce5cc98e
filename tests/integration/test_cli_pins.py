"""``compaction pin`` and ``compaction unpin`` (cli/pins.py; docs/architecture.md, "Pins") through
``cli.main`` on the store's database (SQLite and PostgreSQL): the row's state in ``history
--json``, and each refusal as one ``compaction: error [code]: …`` line with nothing changed."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from compaction.core.messages import Message
from compaction.store import Store
from tests.integration.helpers import compact_session, new_session, seed_forty

Command = Callable[..., tuple[int, str, str]]


def pinned_rows(command: Command, session_id: str) -> set[int]:
    status, out, err = command("history", session_id, "--view", "compacted", "--json")
    assert status == 0, err
    return {row["id"] for row in json.loads(out) if row["pinned"]}


def test_pin_and_unpin(store: Store, command: Command) -> None:
    session_id, ids = new_session(store, seed_forty())
    status, out, err = command("pin", session_id, str(ids[6]))
    assert status == 0, err
    assert out.startswith(f"message {ids[6]} of session {session_id}: pinned;")
    assert pinned_rows(command, session_id) == {ids[6]}
    status, out, _ = command("history", session_id, "--view", "compacted")
    line = next(x for x in out.splitlines() if x.split()[0] == str(ids[6]))
    assert status == 0 and line.split()[2] == "N" and out.rstrip().endswith("N pinned)")
    status, out, _ = command("pin", session_id, str(ids[6]), "--json")
    answer = json.loads(out)
    assert status == 0 and answer["pinned"] and not answer["changed"]
    assert answer["pinnedTokens"] > 0
    status, out, _ = command("unpin", session_id, str(ids[6]))
    assert status == 0 and ": unpinned;" in out
    assert pinned_rows(command, session_id) == set()


def test_refusals_are_one_line_and_change_nothing(store: Store, command: Command) -> None:
    session_id, ids = new_session(store, seed_forty())
    _planned, applied = compact_session(store, session_id)
    before = store.load_history(session_id, "full")
    status, out, err = command("pin", session_id, "999999")
    assert (status, out) == (1, "")
    assert err.strip() == (
        f"compaction: error [invalid_request]: message 999999 not found in session {session_id!r}"
    )
    status, _, err = command("pin", session_id, str(applied.summary_message_id))
    assert status == 1 and err.startswith("compaction: error [invalid_request]: ")
    assert "compaction summary" in err and len(err.strip().splitlines()) == 1
    status, _, err = command("pin", "nobody", str(ids[0]))
    assert status == 1 and "[session_not_found]" in err
    assert store.load_history(session_id, "full") == before


def test_pins_over_the_threshold(
    store: Store, command: Command, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMPACTION_CONTEXT_WINDOW", "20000")  # threshold 14,000
    long = "word " * 2_400  # ~3,000 tokens
    messages = [
        Message(role="user" if i % 2 == 0 else "assistant", content=f"{i} {long}") for i in range(8)
    ]
    session_id, ids = new_session(store, messages)
    for message_id in ids[:4]:
        assert command("pin", session_id, str(message_id))[0] == 0
    status, _, err = command("pin", session_id, str(ids[4]))
    assert status == 1 and err.startswith("compaction: error [pins_over_threshold]: ")
    assert "threshold of 14,000" in err
    assert pinned_rows(command, session_id) == set(ids[:4])
