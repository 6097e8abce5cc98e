"""The auxiliary model's hostile replies through the job (docs/architecture.md, "Error codes"):
a broken JSON body, an HTML page with status 200, JSON of the wrong shape are ``llm_error``
(and the opt-in fallback applies to them as to a 500); a body trickled byte by byte meets one
deadline per attempt, ``llm_timeout``. The history is unchanged in every failure. Same harness
as ``test_worker_jobs.py``."""

from __future__ import annotations

import json
import time

import pytest

from compaction.core.errors import LlmTimeout
from compaction.worker.jobs import run
from tests.fakes import conversation
from tests.integration.worker_helpers import (
    SQLITE_ONLY,
    Harness,
    assert_failed,
    assert_fallback_summary,
    manual,
)
from tests.llm_server import DEFAULT_SUMMARY, Reply

PROVIDERS = ["anthropic", "openai"]

#: name -> a 200 reply no client can read as a summary
MALFORMED: dict[str, Reply] = {
    "broken_json": Reply(body='{"id": "msg_1", "content": [{"type": "text", "text": "Sum'),
    "html_200": Reply(
        body="<html><body><h1>Welcome to nginx!</h1></body></html>", content_type="text/html"
    ),
    "json_array": Reply(body="[1, 2, 3]"),
    "wrong_shape": Reply(
        body=json.dumps(
            {
                "content": [{"type": "text", "text": 42}],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": ["x"]}}],
                "usage": {"input_tokens": "many", "prompt_tokens": "many"},
            }
        )
    ),
    "no_content": Reply(body=json.dumps({"content": None, "choices": [{"message": None}]})),
}


@SQLITE_ONLY
@pytest.mark.parametrize("case", list(MALFORMED))
@pytest.mark.parametrize("provider", PROVIDERS)
def test_malformed_reply_is_an_llm_error(h: Harness, provider: str, case: str) -> None:
    runtime = h.runtime(llm_max_retries=0)
    h.channel(provider)
    h.script(MALFORMED[case])
    session_id = h.session(conversation(12))
    before = h.state(session_id)
    request = manual(session_id)

    final = run(runtime, request)

    failed = assert_failed(h, session_id, before, final, request, "llm_error")
    assert failed.error.startswith(f"{provider}: malformed reply"), failed.error
    assert "\n" not in failed.error
    assert len(h.fake.requests) == 1


@SQLITE_ONLY
@pytest.mark.parametrize("case", list(MALFORMED))
@pytest.mark.parametrize("provider", PROVIDERS)
def test_fallback_summary_after_a_malformed_reply(h: Harness, provider: str, case: str) -> None:
    runtime = h.runtime(fallback_summary=True, llm_max_retries=0)
    h.channel(provider)
    h.script(MALFORMED[case])
    session_id = h.session(conversation(12))

    done = run(runtime, manual(session_id))

    assert_fallback_summary(h, session_id, done)
    assert len(h.fake.requests) == 1


# --- one deadline per attempt ------------------------------------------------------------------

#: seconds between the trickled body's bytes: well under the per-read timeout, so only a
#: deadline on the whole attempt stops it
TRICKLE_S = 0.2


@SQLITE_ONLY
@pytest.mark.parametrize("provider", PROVIDERS)
def test_trickled_body_meets_the_deadline(h: Harness, provider: str) -> None:
    runtime = h.runtime(llm_timeout_s=1.0, llm_max_retries=1)
    h.channel(provider)
    h.script(Reply(text=DEFAULT_SUMMARY, trickle_s=TRICKLE_S))
    session_id = h.session(conversation(12))
    before = h.state(session_id)
    request = manual(session_id)
    # Read whole, the trickled reply would take this long per attempt (and succeed).
    trickle_s = len(DEFAULT_SUMMARY) * TRICKLE_S

    started = time.monotonic()
    final = run(runtime, request)
    elapsed = time.monotonic() - started

    failed = assert_failed(h, session_id, before, final, request, "llm_timeout")
    assert "timed out" in failed.error
    assert len(h.fake.requests) == 2  # one deadline per attempt
    # Not a timing claim: far from the whole trickle, whatever the machine's load.
    assert elapsed < trickle_s / 2, elapsed


@SQLITE_ONLY
def test_trickled_headers_meet_the_deadline(h: Harness) -> None:
    runtime = h.runtime(llm_timeout_s=1.0, llm_max_retries=0)
    h.channel("openai")
    h.script(Reply(head_trickle_s=TRICKLE_S))
    session_id = h.session(conversation(12))
    before = h.state(session_id)
    request = manual(session_id)

    started = time.monotonic()
    final = run(runtime, request)
    elapsed = time.monotonic() - started

    assert_failed(h, session_id, before, final, request, "llm_timeout")
    # the status line and two headers alone take this long
    assert elapsed < len("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n") * TRICKLE_S / 2


@SQLITE_ONLY
def test_a_proxy_from_the_environment_keeps_the_deadline(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The fake answers a forward proxy's requests too (their target is the whole URL).
    for name in ("ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", h.fake.base_url)
    runtime = h.runtime(llm_timeout_s=1.0, llm_max_retries=0)
    h.store.add_channel(
        "behind-a-proxy",
        provider="openai",
        model="gpt-4o-mini",
        base_url="http://llm.invalid/v1",
        api_key="sk-test-0123456789abcdef0123456789abcdef",
        auxiliary=True,
        default=True,
    )
    client = runtime.client_for(h.store.resolve_auxiliary())
    h.script(Reply(text=DEFAULT_SUMMARY, trickle_s=TRICKLE_S))

    with pytest.raises(LlmTimeout):
        client.complete("hello", 100)

    [request] = h.fake.requests
    assert request.path == "http://llm.invalid/v1/chat/completions"
