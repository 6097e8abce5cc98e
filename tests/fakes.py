"""Shared fakes and data loaders for the test suite (one place, docs/architecture.md, "Layers")."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

from compaction.core.config import CompactionConfig
from compaction.core.engine import SummaryRequest
from compaction.core.messages import Message, ToolCall, messages_from_dicts

TRANSCRIPTS = Path(__file__).resolve().parent / "data" / "transcripts"
TRANSCRIPT_NAMES = sorted(p.stem for p in TRANSCRIPTS.glob("*.json"))
#: The seed's 40 messages (``conversation(10)[:40]``) compact with a middle of 24 under this
#: window; ``conversation(10)`` compacts under it too.
SMALL = CompactionConfig(context_window=4_000)


def load_transcript(name: str) -> list[Message]:
    """A shared real transcript, with ids 1..n as if it came from the database."""
    raw = json.loads((TRANSCRIPTS / f"{name}.json").read_text(encoding="utf-8"))
    return [replace(m, id=i) for i, m in enumerate(messages_from_dicts(raw), start=1)]


@dataclass
class Reply:
    text: str
    input_tokens: int = 0
    output_tokens: int = 0


class FakeSummarizer:
    """Records every request; answers with ``text`` (or a default long enough to pass), or
    with what ``answer(request)`` returns."""

    def __init__(self, text: str | None = None, *, usage: tuple[int, int] | None = None) -> None:
        self.text = text
        self.usage = usage
        self.requests: list[SummaryRequest] = []

    def summarize(self, request: SummaryRequest) -> object:
        self.requests.append(request)
        text = self.text
        if text is None:
            text = (
                f"## Goal\nSummary {len(self.requests)} of {len(request.messages)} turns "
                f"(chunk {request.chunk_index + 1}/{request.chunk_count}).\n" + "detail " * 40
            )
        if self.usage is not None:
            return Reply(text, *self.usage)
        return text


def conversation(
    turns: int, *, tool_chars: int = 400, system: bool = True, first_turn: int = 0
) -> list[Message]:
    """A well-formed agent conversation: per turn a user ask, an assistant call, its result,
    and an assistant answer. Ids are 1..n; call ids follow ``first_turn``."""
    out: list[Message] = []
    if system:
        out.append(Message(role="system", content="You are a coding agent."))
    for t in range(first_turn, first_turn + turns):
        call = ToolCall(
            id=f"call_{t}", name="bash", arguments=json.dumps({"command": f"ls /srv/{t}"})
        )
        out += [
            Message(role="user", content=f"Please inspect directory /srv/{t} and report."),
            Message(role="assistant", content=f"Looking at /srv/{t}.", tool_calls=[call]),
            Message(role="tool", content=f"file_{t}.py\n" + "x" * tool_chars, tool_call_id=call.id),
            Message(role="assistant", content=f"Directory /srv/{t} holds file_{t}.py."),
        ]
    return [replace(m, id=i) for i, m in enumerate(out, start=1)]
