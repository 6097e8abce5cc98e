"""The fidelity harness (``benchmarks/fidelity.py``, ``benchmarks/probes.py``) against the
loopback fake model, which answers a probe from the context it was given: the fact when the
context holds it, else "unknown". So the harness itself is measured: the original context finds
every fact; a summary that drops them loses exactly the facts the compacted context no longer
holds."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import pytest
from pydantic import SecretStr
from sqlalchemy import Engine

from benchmarks import fidelity
from benchmarks.probes import KINDS, Probe, generate, message_text
from compaction.core.messages import Message, messages_from_dicts
from compaction.core.offline import OfflineSummarizer
from compaction.service.settings import Settings
from compaction.store import ChannelConfig, Store
from compaction.worker.llm import LlmSummarizer, build_client
from tests.llm_server import FakeLLM, Recorded, Reply

TRANSCRIPT = "openhands_ponyc-4588"
KEY = "sk-fidelity-" + "0123456789abcdef"
#: a summary that keeps none of the span's facts (the ledger the engine appends may keep some)
DROPPING = "## Goal\nFix the issue.\n\n## Progress\n- Looked around the repository.\n" + "x " * 120


def text(message: dict[str, Any]) -> str:
    """What one OpenAI-format message of a request says."""
    content = message.get("content") or ""
    if isinstance(content, list):
        content = "\n".join(str(part.get("text", "")) for part in content)
    calls = (call["function"]["arguments"] for call in message.get("tool_calls") or [])
    return "\n".join([content, *calls])


def answer_from_context(monkeypatch: pytest.MonkeyPatch, fake: FakeLLM) -> dict[str, str]:
    """The fake model answers a probe (a key of the dict returned, filled in by the caller)
    with its fact when the context holds it, else "unknown"; anything else it is asked (a
    summary) gets ``DROPPING``."""
    facts: dict[str, str] = {}

    def next_reply(recorded: Recorded) -> Reply:
        *context, asked = recorded.body["messages"]
        fact = facts.get(text(asked))
        if fact is None:
            return Reply(DROPPING)
        said = "\n".join(text(m) for m in context)
        return Reply(fact if fidelity.found(fact, said) else "unknown")

    monkeypatch.setattr(fake, "next_reply", next_reply)
    return facts


def joined(messages: Sequence[Message]) -> str:
    return " ".join("\n".join(message_text(m) for m in messages).split())


def test_probes_are_exact_facts_of_the_span_the_kept_messages_do_not_show() -> None:
    messages = fidelity.load(TRANSCRIPT)
    compacted = fidelity.compact(messages, OfflineSummarizer())
    probes = generate(messages, compacted.span_ids, compacted.kept, 12)

    span = joined([m for m in messages if m.id in compacted.span_ids])
    kept = joined(compacted.kept)
    assert probes and {p.kind for p in probes} <= set(KINDS)
    for probe in probes:
        assert probe.fact in span and probe.fact not in kept and probe.fact not in probe.question
    assert (
        Probe(
            "command",
            "What was the first line of the result of `cd /workspace/ponylang__ponyc__0.1 && "
            "ls -l`?",
            "total 296",
        )
        in probes
    )
    assert len(probes) == len({p.fact for p in probes})
    assert generate(messages, compacted.span_ids, compacted.kept, 2) == probes[:2]


def test_probes_of_each_kind() -> None:
    """Errors on a real loop (mini-swe-agent on pydicom); a written file on a small one."""
    messages = fidelity.load("msa_deepseek-chat_pydicom-1139")
    compacted = fidelity.compact(messages, OfflineSummarizer())
    errors = {p.fact for p in generate(messages, compacted.span_ids, compacted.kept, 100)}
    assert "TypeError: object of type 'PersonName' has no len()" in errors

    edit = {"command": "create", "path": "/src/app/config.py", "file_text": "VERSION = 2.31.0\n"}
    function = {"name": "str_replace_editor", "arguments": json.dumps(edit)}
    calls = [{"id": "c1", "type": "function", "function": function}]
    raw: list[dict[str, Any]] = [
        {"role": "user", "content": "write the config"},
        {"role": "assistant", "content": "", "tool_calls": calls},
        {"role": "tool", "tool_call_id": "c1", "content": "File created successfully."},
        {"role": "assistant", "content": "Done."},
    ]
    small = [replace(m, id=i) for i, m in enumerate(messages_from_dicts(raw), start=1)]
    found = generate(small, {2, 3}, small[3:], 10)
    assert (
        Probe(
            "path",
            "Which file did the assistant write or edit so that it holds `VERSION = 2.31.0`?",
            "/src/app/config.py",
        )
        in found
    )
    assert ("command", "File created successfully.") in {(p.kind, p.fact) for p in found}
    assert ("value", "2.31.0") in {(p.kind, p.fact) for p in found}


def test_the_compacted_context_loses_exactly_what_the_summary_dropped(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    channel = ChannelConfig(
        1,
        "fake",
        "openai-compatible",
        "gpt-4o-mini",
        fake_llm.url_for("openai"),
        SecretStr(KEY),
        None,
        True,
    )
    client = build_client(channel, Settings(database_url="sqlite://"))
    facts = answer_from_context(monkeypatch, fake_llm)
    messages = fidelity.load(TRANSCRIPT)
    compacted = fidelity.compact(messages, LlmSummarizer(client))
    probes = generate(messages, compacted.span_ids, compacted.kept, 12)
    facts.update({p.prompt: p.fact for p in probes})

    answers = fidelity.measure(client, messages, compacted, probes)
    rows = fidelity.report(answers)

    summary = joined([m for m in compacted.messages if m.is_summary])
    assert "Looked around the repository." in summary  # the channel wrote it
    assert [a.found_original for a in answers] == [True] * len(probes)
    kept = [fidelity.found(p.fact, summary) for p in probes]
    assert [a.found_compacted for a in answers] == kept
    assert False in kept  # the summary dropped something, and the report shows it
    for kind, row in rows.items():
        group = [k for p, k in zip(probes, kept, strict=True) if kind in ("all", p.kind)]
        assert row["probes"] == len(group)
        assert (row["original"], row["compacted"]) == (1.0, sum(group) / len(group))
        assert row["agreement"] == row["compacted"]
    assert rows["command"]["compacted"] == 0.0  # the outputs' first lines: in no ledger


# The channel is looked up as every command looks one up (tested on both databases there).
sqlite_only = pytest.mark.parametrize("engine", ["sqlite"], indirect=True)


@pytest.fixture
def run(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Callable[..., tuple[int, str, str]]:
    """``benchmarks.fidelity.main`` on the ``engine`` fixture's database, with none of the
    caller's settings."""
    for name in [n for n in os.environ if n.startswith("COMPACTION_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("COMPACTION_DATABASE_URL", engine.url.render_as_string(hide_password=False))

    def call(*argv: str) -> tuple[int, str, str]:
        status = fidelity.main(list(argv))
        out, err = capsys.readouterr()
        return status, out, err

    return call


@sqlite_only
def test_the_command_prints_the_table(
    run: Callable[..., tuple[int, str, str]],
    store: Store,
    fake_llm: FakeLLM,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_llm.add_channel(store, "fake", api_key=KEY)
    messages = fidelity.load(TRANSCRIPT)
    compacted = fidelity.compact(messages, OfflineSummarizer())
    probes = generate(messages, compacted.span_ids, compacted.kept, 4)
    answer_from_context(monkeypatch, fake_llm).update({p.prompt: p.fact for p in probes})
    argv = ["--channel", "fake", "--transcript", TRANSCRIPT, "--probes", "4", "--offline"]

    status, out, err = run(*argv)
    status_json, out_json, _ = run(*argv, "--json")

    assert (status, err, status_json) == (0, "", 0)
    lines = out.splitlines()
    assert lines[0] == "$ python -m benchmarks.fidelity " + " ".join(argv)
    assert lines[3].split() == ["kind", "probes", "original", "compacted", "agreement"]
    assert lines[-1].split()[:3] == ["all", "4", "100%"]
    report = json.loads(out_json)
    assert report["kinds"]["all"]["probes"] == 4 and report["kinds"]["all"]["original"] == 1.0
    assert KEY not in out + out_json


@sqlite_only
def test_a_missing_channel_is_one_line_and_exit_2(run: Callable[..., tuple[int, str, str]]) -> None:
    status, out, err = run("--channel", "nope", "--offline")

    assert (status, out) == (2, "")
    assert err == "fidelity: error: no channel 'nope'\n"
