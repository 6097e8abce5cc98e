"""The offline summarizer asked for the loop's execution summary (compaction/core/offline.py): the
loop's headings, filled from the steps, through ``compact_loop`` on real transcripts, and kept
on an update."""

from __future__ import annotations

from dataclasses import replace

import pytest

from compaction import CompactionConfig, estimate_messages_tokens
from compaction.core.loop import LoopResult, compact_loop
from compaction.core.messages import Message, last_real_user_index
from compaction.core.offline import OfflineSummarizer
from compaction.core.prompts import HEADINGS, Language
from compaction.core.prompts_loop import LOOP, LOOP_HEADINGS, LOOP_MARKER
from tests.fakes import load_transcript
from tests.unit.builders import assistant, tool
from tests.unit.offline_helpers import NONE, bash, request, section

#: transcript, its language, a call of its compacted steps, a line of its "Done"
CASES = [
    (
        "msa_deepseek-chat_pydicom-1139",
        "en",
        "bash `python reproduce_issue.py`",
        "ran `cd /testbed && python -m pytest pydicom/tests/test_valuerep.py -xvs`",
    ),
    (
        "deerflow_5aa47db1_zh",
        "zh",
        "write_file `/mnt/user-data/workspace/jiangsu-football/index.html`",
        "ran `mkdir -p /mnt/user-data/workspace/jiangsu-football/css`",
    ),
]
#: Room for every line of every section (the budget trims none): an update keeps them all.
ROOMY = {"summary_min_tokens": 12_000}


def loop_config(messages: list[Message]) -> CompactionConfig:
    """A threshold of the system prompt, the request and a third of the loop."""
    request_at = last_real_user_index(messages)
    assert request_at is not None
    head = [m for m in messages[:request_at] if m.role == "system"] + [messages[request_at]]
    loop_tokens = estimate_messages_tokens(messages[request_at + 1 :])
    threshold = estimate_messages_tokens(head) + loop_tokens // 3
    return CompactionConfig(context_window=threshold * 100 // 70 + 1, protect_first_n=1, **ROOMY)


def loop_summary(messages: list[Message], config: CompactionConfig) -> LoopResult:
    result = compact_loop(messages, config, OfflineSummarizer())
    assert result.summarized and result.summary_message is not None
    assert result.summary_text.startswith(LOOP_MARKER)
    return result


def headings_of(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("#")]


@pytest.mark.parametrize(("name", "language", "call", "done"), CASES)
def test_a_real_loop_gets_the_loop_headings(
    name: str, language: Language, call: str, done: str
) -> None:
    messages = load_transcript(name)
    result = loop_summary(messages, loop_config(messages))
    assert result.language == language
    text = result.summary_text
    loop_headings = list(LOOP_HEADINGS[language].values())
    assert headings_of(text)[: len(loop_headings)] == loop_headings  # the ledger follows
    for heading in set(HEADINGS[language].values()) - set(loop_headings):
        assert heading not in text.splitlines()
    assert ("抽取式" if language == "zh" else "Extractive") in text
    # A call of the compacted steps (the ones kept verbatim are not summarized).
    start, end = result.middle
    arguments = [c.arguments for m in messages[start:end] for c in m.tool_calls]
    assert any(call.split("`")[1] in a for a in arguments)
    assert call in section(text, LOOP_HEADINGS[language]["calls"])
    assert done in section(text, LOOP_HEADINGS[language]["done"])
    again = compact_loop(load_transcript(name), loop_config(messages), OfflineSummarizer())
    assert again.summary_text == text


@pytest.mark.parametrize(("name", "language"), [(n, lang) for n, lang, _, _ in CASES])
def test_a_second_loop_compaction_keeps_the_first_ones_lines(name: str, language: Language) -> None:
    messages = load_transcript(name)
    config = loop_config(messages)
    # The first compaction sees the loop up to two thirds of its steps, the second all of it.
    cut = next(
        i for i in range(len(messages) * 2 // 3, len(messages)) if messages[i].role == "assistant"
    )
    first = loop_summary(messages[:cut], config)
    second = loop_summary([*first.messages, *messages[cut:]], config)
    assert second.folded_previous
    headings = LOOP_HEADINGS[language]
    for key in ("calls", "done", "failed", "state"):
        old = section(first.summary_text, headings[key])
        new = section(second.summary_text, headings[key])
        kept = [line for line in old if line != NONE[language]]
        assert kept == new[: len(kept)], key  # earlier lines first, all of them
    assert len(section(second.summary_text, headings["calls"])) > len(
        section(first.summary_text, headings["calls"])
    )


def test_an_update_replaces_the_next_step_and_adds_calls() -> None:
    steps = [
        assistant("Reading the config.", bash("cat /etc/app/config.toml", "c1")),
        tool("Error: permission denied", "c1"),
    ]
    first = OfflineSummarizer().summarize(replace(request(steps), prompts=LOOP))
    later = [
        assistant(
            "Retrying with sudo, then restarting.", bash("sudo cat /etc/app/config.toml", "c2")
        ),
        tool("port = 8080", "c2"),
    ]
    out = OfflineSummarizer().summarize(replace(request(later, previous=first), prompts=LOOP))
    en = LOOP_HEADINGS["en"]
    assert section(out, en["calls"]) == [
        "bash `cat /etc/app/config.toml`",
        "bash `sudo cat /etc/app/config.toml`",
    ]
    assert section(out, en["failed"]) == ["Error: permission denied"]
    assert "/etc/app/config.toml" in section(out, en["state"])
    assert section(out, en["next"]) == ["Retrying with sudo, then restarting."]
    assert headings_of(out) == list(en.values())
