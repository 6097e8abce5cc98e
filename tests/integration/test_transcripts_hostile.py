"""Hostile transcript content at every way in (issue 11; docs/architecture.md, "Error codes"):
``compaction import`` (``cli.main`` in this process), the store's append (the producers' and a
gateway's path) and the history shown to a person. On SQLite and the real PostgreSQL
(``engine`` fixture), which refuses NUL in text and cannot hold a lone surrogate.

- Text no database stores (NUL, lone surrogates, also as escapes inside tool-call arguments)
  and arguments nested deeper than ``MAX_ARGUMENTS_DEPTH`` are ``invalid_request``, with
  nothing stored; a session stored with such data before still compacts, and its summary holds
  none of it.
- A refused import stores nothing: no session, no agent.
- Tool-call ids are unique per session: a second import of the same transcript is refused.
- ``compaction history`` shows control characters escaped, never raw.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, select, update

from compaction.core.contract import CompactionDone
from compaction.core.errors import InvalidRequest
from compaction.core.messages import Message
from compaction.store import Store
from compaction.store.models import Agent, ChatSession
from compaction.store.models import Message as MessageRow
from compaction.worker.jobs import run
from tests.fakes import conversation
from tests.integration.helpers import driver_error, failing
from tests.integration.transcript_helpers import assert_refused, turn, write
from tests.integration.worker_helpers import Harness, manual

DEEP = "[" * 10_000 + "]" * 10_000


def deep_object(depth: int) -> dict[str, Any]:
    inner: dict[str, Any] = {}
    outer = inner
    for _ in range(depth):
        inner["x"] = {}
        inner = inner["x"]
    return outer


#: name -> (the transcript file's text, words of the error line). json.dumps writes NUL and
#: lone surrogates as \u escapes, as any JSON encoder does.
HOSTILE: dict[str, tuple[str, str]] = {
    "nul_in_content": (json.dumps([{"role": "user", "content": "a\x00b"}]), "NUL"),
    "lone_surrogate_in_content": (
        json.dumps([{"role": "user", "content": "a\ud800b"}]),
        "lone surrogate",
    ),
    "nul_in_arguments": (json.dumps(turn('{"command": "ls\x00"}')), "NUL"),
    "escaped_nul_in_arguments": (json.dumps(turn('{"command": "ls \\u0000"}')), "NUL"),
    "lone_surrogate_in_arguments": (json.dumps(turn('{"command": "ls \udc00"}')), "surrogate"),
    "lone_surrogate_escape_in_arguments": (
        json.dumps(turn('{"command": "ls \\ud800"}')),
        "surrogate",
    ),
    "deep_arguments": (json.dumps(turn('{"command": "ls", "x": ' + DEEP + "}")), "deeper"),
    # The arguments as an object, 10,000 deep in the file itself.
    "deep_arguments_object": (
        json.dumps(turn("HERE")).replace('"HERE"', '{"command": "ls", "x": ' + DEEP + "}"),
        "deeper",
    ),
    "nul_in_tool_call_id": (json.dumps(turn("{}", call_id="call\x00")), "NUL"),
    "nul_in_tool_name": (json.dumps(turn("{}", name="ba\x00sh")), "NUL"),
}


def count(engine: Engine, table: Any) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(table)).scalar_one())


def assert_nothing_stored(engine: Engine) -> None:
    assert count(engine, ChatSession) == 0
    assert count(engine, Agent) == 0
    assert count(engine, MessageRow) == 0


# --- 1. text no database stores, arguments too deep -----------------------------------------


@pytest.mark.parametrize("case", list(HOSTILE))
def test_import_refuses_hostile_content_and_stores_nothing(
    command: Callable[..., tuple[int, str, str]], engine: Engine, tmp_path: Path, case: str
) -> None:
    text, words = HOSTILE[case]
    path = write(tmp_path, text)
    assert_refused(command("import", path, "--session", "s1", "--agent", "a1"), words)
    assert_refused(command("import", path), words)  # a random session id, never printed
    assert_nothing_stored(engine)


@pytest.mark.parametrize("case", list(HOSTILE))
def test_append_refuses_hostile_content(store: Store, case: str) -> None:
    session_id = store.create_session()
    if case == "deep_arguments_object":  # a gateway's Python object, not a file
        messages = turn({"command": "ls", "x": deep_object(10_000)})
    else:
        messages = json.loads(HOSTILE[case][0])
    with pytest.raises(InvalidRequest, match=HOSTILE[case][1]):
        store.append_messages(session_id, messages)
    assert store.load_history(session_id, "full") == []


@pytest.mark.parametrize(
    "message",
    [
        Message(role="user", content="a\x00b"),
        Message(role="user", content="a\udfffb"),
        Message(role="tool", content="ok", tool_call_id="c\ud800"),
    ],
    ids=["nul", "lone_surrogate", "surrogate_in_result_id"],
)
def test_append_refuses_hostile_message_objects(store: Store, message: Message) -> None:
    """The producers append ``Message`` objects built by the gateway: checked as dicts are."""
    session_id = store.create_session()
    with pytest.raises(InvalidRequest, match="message 1: "):
        store.append_messages(session_id, [Message(role="user", content="fine"), message])
    assert store.load_history(session_id, "full") == []


def test_arguments_that_look_hostile_but_are_not_are_stored(store: Store) -> None:
    """A surrogate pair written as escapes (an emoji), an escaped backslash before ``u0000``,
    and ordinary nesting are real tool calls."""
    session_id = store.create_session()
    arguments = [
        '{"text": "\\ud83d\\ude00"}',
        '{"path": "C:\\\\u0000dir"}',
        json.dumps({"a": [[[[{"b": [1, 2, {"c": "[[[["}]}]]]]}),
    ]
    for index, text in enumerate(arguments):
        store.append_messages(session_id, turn(text, call_id=f"call_{index}"))
    stored = [m.message for m in store.load_history(session_id, "full")]
    assert [c.arguments for m in stored for c in m.tool_calls] == arguments


def hostile_rows(store: Store, engine: Engine) -> str:
    """A session whose middle holds what validation now refuses, written past it (as data
    stored before it, or by hand): NUL and lone surrogates behind escapes in commands, a raw
    NUL in arguments (PostgreSQL's json column keeps it as an escape), arguments 10,000 deep,
    and on SQLite a raw NUL in a tool's output (PostgreSQL cannot hold one)."""
    session_id = store.create_session()
    ids = store.append_messages(session_id, conversation(12))
    # conversation(): id 1 is the system prompt, then four rows a turn; turn t's call is at
    # 4t + 3 and its result at 4t + 4. Turns 1 to 4 fall in the middle.
    commands = [
        '{"command": "rm -rf /tmp/x \\u0000 && make"}',
        '{"command": "echo \\ud800 done"}',
        '{"command": "ls /srv\x00/raw"}',
        '{"command": "make", "x": ' + DEEP + "}",
    ]
    with engine.begin() as conn:
        for t, arguments in enumerate(commands, start=1):
            call = {"id": f"call_{t}", "name": "bash", "arguments": arguments}
            conn.execute(
                update(MessageRow).where(MessageRow.id == ids[4 * t + 2]).values(tool_calls=[call])
            )
        if engine.dialect.name == "sqlite":
            conn.execute(
                update(MessageRow)
                .where(MessageRow.id == ids[4 * 2 + 3])
                .values(content="Error: disk\x00 full at /var/lib/x\x00y")
            )
    return session_id


def test_a_session_stored_with_hostile_data_still_compacts(h: Harness) -> None:
    runtime = h.runtime()
    h.channel("openai")
    session_id = hostile_rows(h.store, h.engine)

    final = run(runtime, manual(session_id))

    assert isinstance(final, CompactionDone), final
    summary = h.store.latest_summary(session_id)
    assert summary is not None and summary.id == final.summary_message_id
    text = summary.message.content
    assert "\x00" not in text
    text.encode("utf-8")  # no lone surrogate
    assert "rm -rf /tmp/x" in text  # the command is still listed, its NUL gone


# --- 2. a failed import stores nothing --------------------------------------------------------


def test_a_refused_session_id_leaves_no_agent(
    command: Callable[..., tuple[int, str, str]], engine: Engine, tmp_path: Path
) -> None:
    path = write(tmp_path, json.dumps([{"role": "user", "content": "hi"}]))
    assert_refused(command("import", path, "--agent", "a1", "--session", "s" * 200), "session id")
    assert_nothing_stored(engine)


def test_an_import_creates_its_agent_with_the_session(
    command: Callable[..., tuple[int, str, str]], store: Store, tmp_path: Path
) -> None:
    path = write(tmp_path, json.dumps(turn('{"command": "ls"}')))
    assert command("import", path, "--session", "s1", "--agent", "a1")[:2] == (0, "s1\n")
    assert store.get_session("s1").agent_id == "a1"
    assert store.get_agent("a1") is not None
    assert len(store.load_history("s1")) == 3


def test_a_database_failure_during_import_stores_nothing(
    command: Callable[..., tuple[int, str, str]], engine: Engine, tmp_path: Path
) -> None:
    """The session, its agent and its rows go in one transaction: a failure at the rows'
    INSERT leaves none of them."""
    path = write(tmp_path, json.dumps(turn('{"command": "ls"}')))
    with failing(Engine, lambda s: s.is_insert_into("message"), error=lambda: driver_error(engine)):
        status, out, err = command("import", path, "--agent", "a1")
    assert (status, out) == (1, "")
    assert err.startswith("compaction: error [db_error]: "), err
    assert_nothing_stored(engine)
