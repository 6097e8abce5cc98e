"""A system prompt alone over the threshold (compaction/core/system_prompt.py; the seed's
"系统提示本身就超阈值：抛'系统提示过长'错误，引导精简"): ``/compact`` answers
``system_prompt_too_large`` with the advice to shorten it, in the user's language, from the
producers' manual request, the worker and the command line: never ``nothing_to_compact``, and
nothing queued or written."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from compaction.core.contract import CompactionFailed
from compaction.core.errors import SystemPromptTooLarge
from compaction.core.messages import Message
from compaction.producers import trigger
from compaction.producers.context import Producers
from compaction.service.queue import compaction_queue
from compaction.worker.jobs import run
from tests.integration.worker_helpers import Harness, manual
from tests.services import RedisNamespace

ADVICE = {"en": "shorten the system prompt", "zh": "请精简系统提示"}
SAID = {"en": "Please fix the failing build.", "zh": "请帮我修复构建失败的问题。"}


def over_the_threshold(said: str) -> list[Message]:
    """Two system messages, each under the 2,800-token threshold (a 4,000 window), together
    over it; then a short exchange."""
    return [
        Message(role="system", content="s" * 6_000),
        Message(role="system", content="t" * 6_000),
        Message(role="user", content=said),
        Message(role="assistant", content="On it."),
    ]


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_manual_request_is_refused_before_it_is_queued(ctx: Producers, language: str) -> None:
    session_id = ctx.store.create_session()
    ctx.store.append_messages(session_id, over_the_threshold(SAID[language]))
    with pytest.raises(SystemPromptTooLarge) as err:
        trigger.request_manual(ctx, session_id)
    assert err.value.code == "system_prompt_too_large"
    assert ADVICE[language] in err.value.message
    assert compaction_queue(ctx.redis, ctx.settings.queue_name).count == 0


def test_the_worker_fails_such_a_request_naming_the_system_prompt(h: Harness) -> None:
    """A request that reached the worker anyway (queued before the prompt grew, or by a
    client of the queue): failed as ``system_prompt_too_large``, not ``nothing_to_compact``."""
    runtime = h.runtime()
    h.channel("openai")
    session_id = h.session(over_the_threshold(SAID["en"]))
    before = h.state(session_id)

    failed = run(runtime, manual(session_id))

    assert isinstance(failed, CompactionFailed) and failed.code == "system_prompt_too_large"
    assert ADVICE["en"] in failed.error
    assert h.state(session_id).unchanged_since(before) and not h.fake.requests
    [record] = h.store.runs(session_id)
    assert (record.status, record.code) == ("failed", "system_prompt_too_large")


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_command_line_prints_the_code_and_the_advice(
    command: Callable[..., tuple[int, str, str]],
    redis_namespace: RedisNamespace,
    monkeypatch: pytest.MonkeyPatch,
    language: str,
) -> None:
    for name, value in redis_namespace.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("COMPACTION_CONTEXT_WINDOW", "4000")
    transcript = "transcript.json"
    rows = [{"role": m.role, "content": m.content} for m in over_the_threshold(SAID[language])]
    with open(transcript, "w", encoding="utf-8") as written:
        json.dump(rows, written, ensure_ascii=False)
    assert command("import", transcript, "--session", "s1")[0] == 0

    status, out, err = command("compact", "s1", "--wait", "--timeout", "5")

    assert (status, out) == (1, "")
    assert err.startswith("compaction: error [system_prompt_too_large]: ")
    assert ADVICE[language] in err and err.count("\n") == 1
