"""Hostile transcripts, continued (issue classes 3 and 4): tool-call ids unique per session, and
control characters shown escaped by ``compaction history``."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from compaction.core.errors import InvalidRequest
from compaction.store import Store
from tests.fakes import conversation
from tests.integration.transcript_helpers import assert_refused, turn, write

# --- 3. tool-call ids unique per session ------------------------------------------------------


def test_importing_a_transcript_twice_into_one_session_is_refused(
    command: Callable[..., tuple[int, str, str]], store: Store, tmp_path: Path
) -> None:
    path = write(tmp_path, json.dumps([*turn("{}"), {"role": "assistant", "content": "done"}]))
    assert command("import", path, "--session", "s1")[:2] == (0, "s1\n")
    before = store.load_history("s1", "full")

    assert_refused(command("import", path, "--session", "s1"), "'call_1'", "already")
    assert store.load_history("s1", "full") == before


@pytest.mark.parametrize(
    "batch",
    [
        turn("{}", call_id="call_3"),  # a new call reusing an answered call's id
        turn("{}", call_id="open_1")[1:2],  # the open turn's call sent again
        [{"role": "tool", "tool_call_id": "call_3", "content": "again"}],  # a second result
        [*turn("{}", call_id="n1"), *turn("{}", call_id="n1")],  # twice in the batch
    ],
    ids=["answered_call", "open_call", "second_result", "within_batch"],
)
def test_append_refuses_a_tool_call_id_the_session_holds(
    store: Store, batch: list[dict[str, Any]]
) -> None:
    """Against the stored results (any call before the open turn has one) and the calls of
    the open turn, still waiting for theirs."""
    session_id = store.create_session()
    store.append_messages(session_id, conversation(5))
    store.append_messages(session_id, turn("{}", call_id="open_1")[:2])
    before = store.load_history(session_id, "full")
    with pytest.raises(InvalidRequest, match="tool call id"):
        store.append_messages(session_id, batch)
    assert store.load_history(session_id, "full") == before


def test_append_answers_a_stored_call(store: Store) -> None:
    """The result of a call stored by an earlier append is no duplicate."""
    session_id = store.create_session()
    store.append_messages(session_id, turn("{}", call_id="c1")[:2])
    store.append_messages(session_id, turn("{}", call_id="c1")[2:])
    assert [m.message.role for m in store.load_history(session_id)] == [
        "user",
        "assistant",
        "tool",
    ]


# --- 4. control characters are shown, not executed ------------------------------------------

ESCAPES = "\x1b]52;c;aGk=\x07 clear\x1b[2J \x9b31m red \u202egnp.exe"


@pytest.fixture
def escapes_session(store: Store) -> Iterator[str]:
    session_id = store.create_session("esc")
    store.append_messages(
        session_id,
        [
            {"role": "user", "content": ESCAPES},
            *turn("{}", name="tool\x1b[2J"),
        ],
    )
    yield session_id


def test_history_shows_control_characters_escaped(
    command: Callable[..., tuple[int, str, str]], escapes_session: str
) -> None:
    status, out, err = command("history", escapes_session, "--view", "full")
    assert status == 0, err
    for raw in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert raw not in out
    assert "\\x1b]52;c;aGk=\\x07 clear\\x1b[2J \\x9b31m red \\u202egnp.exe" in out
    assert "tool\\x1b[2J" in out


def test_history_json_stays_exact(
    command: Callable[..., tuple[int, str, str]], escapes_session: str
) -> None:
    status, out, err = command("history", escapes_session, "--view", "full", "--json")
    assert status == 0, err
    assert "\x1b" not in out and "\x07" not in out
    rows = json.loads(out)
    assert rows[0]["content"] == ESCAPES
    assert rows[2]["tool_calls"][0]["name"] == "tool\x1b[2J"
