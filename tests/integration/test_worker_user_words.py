"""The user's own words through the job (docs/algorithm.md, "The user's own words"): the
summary the worker applies holds each user message of the compacted span verbatim, with the
model's summary (the real SDK against the loopback server) and with the offline fallback, and
``compaction_done``'s receipt counts them kept; on SQLite and real PostgreSQL, with real Redis."""

from __future__ import annotations

from dataclasses import replace

import pytest

from compaction.core.contract import CompactionDone
from compaction.worker.jobs import run
from tests.fakes import conversation
from tests.integration.worker_helpers import Harness, manual
from tests.llm_server import Reply

RULES = ("Never edit the generated files.\nThey come from make gen.", "Go with plan C, not B.")


@pytest.mark.parametrize("fallback", [False, True], ids=["llm", "fallback"])
def test_the_applied_summary_holds_the_users_words(h: Harness, fallback: bool) -> None:
    runtime = h.runtime(fallback_summary=fallback, llm_max_retries=0)
    h.channel("openai")
    h.script(Reply(status=500) if fallback else Reply())
    messages = conversation(12)
    users = [i for i, m in enumerate(messages) if m.role == "user"]
    for at, text in zip(users[1:3], RULES, strict=True):  # past the protected head
        messages[at] = replace(messages[at], content=text)
    session_id = h.session(messages)

    done = run(runtime, manual(session_id))

    assert isinstance(done, CompactionDone), done
    summary = h.store.latest_summary(session_id)
    assert summary is not None
    text = summary.message.content
    for rule in RULES:
        assert f"<user-message>\n{rule}\n</user-message>" in text, rule
    # newest first
    assert text.index(RULES[1]) < text.index(RULES[0])
    assert done.receipt is not None
    counted = done.receipt.user_messages
    assert counted.total >= 2 and counted.verbatim == counted.total
