"""Bounds on what is written, at the command line and the producers' append
(docs/algorithm.md, "Bounds"): a message alone over the session's threshold is refused with
``message_too_large`` (an import names its index), nothing stored; a session id no URL can
reach is refused by ``compaction import`` as by the gateway (the one rule,
``compaction.core.contract.SESSION_ID_RULE``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from compaction.core.errors import MessageTooLarge
from compaction.core.messages import Message
from compaction.producers.context import Producers
from tests.integration.transcript_helpers import write

Command = Callable[..., tuple[int, str, str]]
HUGE = "Here is the whole log file, please read it. " * 800  # ~9,000 tokens
HUGE_ZH = "这是完整的日志文件，请仔细阅读并找出问题。" * 800


def lines(result: tuple[int, str, str]) -> str:
    status, out, err = result
    assert (status, out) == (1, ""), err
    [line] = err.splitlines()
    return line


@pytest.mark.parametrize("session_id", ["tenant/chat", "..", "a\\b"])
def test_import_refuses_a_session_id_no_url_reaches(
    command: Command, tmp_path: Path, session_id: str
) -> None:
    path = write(tmp_path, json.dumps([{"role": "user", "content": "hello"}]))
    line = lines(command("import", path, "--session", session_id))
    assert line.startswith("compaction: error [invalid_request]: a session id is 1 to 128")
    assert "'/'" in line
    assert "session_not_found" in lines(command("stats", session_id))


def test_import_names_the_message_over_the_threshold_and_stores_nothing(
    command: Command, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMPACTION_CONTEXT_WINDOW", "2000")
    transcript = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": HUGE},
    ]
    path = write(tmp_path, json.dumps(transcript))
    line = lines(command("import", path, "--session", "s1"))
    assert line.startswith("compaction: error [message_too_large]: message 2 is ~")
    assert "threshold of 1,400" in line and "split it" in line
    assert "session_not_found" in lines(command("stats", "s1"))
    status, out, err = command(
        "import", write(tmp_path, json.dumps(transcript[:2])), "--session", "s1"
    )
    assert (status, out.strip()) == (0, "s1"), err


def test_the_producers_append_refuses_a_message_over_the_threshold(ctx: Producers) -> None:
    session_id = ctx.store.create_session(messages=[Message(role="user", content="hi")])
    with pytest.raises(MessageTooLarge) as refused:
        ctx.append_messages(session_id, [Message(role="user", content=HUGE_ZH)])
    assert "建议拆分" in refused.value.message
    # under the 4,000-token window it fits; under the turn's model's 2,000 it does not
    fits = Message(role="user", content="Please read this part of the log. " * 200)
    with pytest.raises(MessageTooLarge):
        ctx.append_messages(session_id, [fits], model="small-model")
    assert [s.message.content for s in ctx.store.load_history(session_id)] == ["hi"]
    [stored] = ctx.append_messages(session_id, [fits])
    assert ctx.store.load_history(session_id)[-1].id == stored
