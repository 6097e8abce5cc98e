"""Secrets that are secrets only in context (docs/architecture.md, "The algorithm"): the
serializer's redaction takes them out of the prompt by what stands before them, and the summary
message (the ledger, which lists identifiers alone, and the extractive fallback, which quotes the
turns) never puts them back. Same harness as ``test_worker_jobs.py``."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from compaction.core.contract import CompactionDone
from compaction.core.messages import Message
from compaction.worker.jobs import run
from tests.fakes import conversation
from tests.integration.worker_helpers import SQLITE_ONLY, Harness, manual
from tests.llm_server import Reply

# Each secret below is a value the serializer's redaction recognises by what stands before it,
# and the ledger used to list alone (a path, an id, a command).
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
SIGNING_SECRET = "9f86d081884c7d659a2f" + "eaa0c55ad015a3bf4f1b"
CURL_PASSWORD = "admin:pass"


def context_secret_transcript() -> list[Message]:
    messages = conversation(12)
    messages[7] = replace(
        messages[7],
        content="[default]\naws_access_key_id = AKIA"
        + "IOSFODNN7EXAMPLE\n"
        + f"aws_secret_access_key = {AWS_SECRET}\n",
    )
    messages[9] = replace(messages[9], content=f"The webhook signing secret: {SIGNING_SECRET}")
    [call] = messages[10].tool_calls
    command = f"curl -u {CURL_PASSWORD} https://api.example.com/v1/items"
    messages[10] = replace(
        messages[10], tool_calls=[replace(call, arguments=json.dumps({"command": command}))]
    )
    return messages


@SQLITE_ONLY
@pytest.mark.parametrize("fallback", [False, True], ids=["llm", "fallback"])
def test_the_summary_never_puts_back_what_redaction_took_out(h: Harness, fallback: bool) -> None:
    runtime = h.runtime(fallback_summary=fallback, llm_max_retries=0)
    h.channel("openai")
    h.script(Reply(status=500) if fallback else Reply())
    session_id = h.session(context_secret_transcript())

    done = run(runtime, manual(session_id))

    assert isinstance(done, CompactionDone), done
    sent = h.fake.bodies_text()
    summary = h.store.latest_summary(session_id)
    assert summary is not None
    text = summary.message.content
    assert "https://api.example.com/v1/items" in text  # the ledger lists what is no secret
    for secret in (AWS_SECRET, SIGNING_SECRET, CURL_PASSWORD):
        assert secret not in sent, secret
        assert secret not in text, secret
