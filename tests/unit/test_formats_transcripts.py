"""Every shared real transcript through both wire formats and back (compaction/core/formats.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compaction.core.formats import from_anthropic, from_openai, to_anthropic, to_openai
from compaction.core.messages import Message, messages_from_dicts
from tests.fakes import TRANSCRIPTS

TRANSCRIPT_FILES = sorted(TRANSCRIPTS.glob("*.json"))


def test_transcripts_present() -> None:
    assert TRANSCRIPT_FILES, f"no transcripts under {TRANSCRIPTS}"


@pytest.mark.parametrize("path", TRANSCRIPT_FILES, ids=lambda p: p.stem)
def test_transcript_round_trips(path: Path) -> None:
    msgs = messages_from_dicts(json.loads(path.read_text(encoding="utf-8")))
    assert from_openai(to_openai(msgs)) == msgs

    system, wire = to_anthropic(msgs)
    back = from_anthropic(wire, system)
    systems = [m for m in msgs if m.role == "system"]
    if systems:
        assert system is not None
        assert all(m.content in system for m in systems)
        assert back[0] == Message(role="system", content=system)
        back = back[1:]
    rest = [m for m in msgs if m.role != "system"]
    assert [(m.role, m.content, m.tool_call_id) for m in back] == [
        (m.role, m.content, m.tool_call_id) for m in rest
    ]
    assert [[(c.id, c.name) for c in m.tool_calls] for m in back] == [
        [(c.id, c.name) for c in m.tool_calls] for m in rest
    ]
