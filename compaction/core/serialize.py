"""How the middle is shown to the summarizer (docs/architecture.md, "The algorithm", phase 3).

Each message becomes ``[ROLE] content``; a long content keeps its head and tail (4000 + 1500
characters by default). The summarizer reads the original contents, never phase 1's
placeholders: the placeholders are for what stays in the context.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from compaction.core.messages import ROLES, Message

TURNS_OPEN = "<turns>"
TURNS_CLOSE = "</turns>"
# Any spelling a model would read as the end of the quoted block.
_CLOSE = re.compile(r"<\s*/\s*turns\s*>", re.IGNORECASE)
#: Each role's tag, made once instead of per message.
_TAGS = {role: f"[{role.upper()}] " for role in ROLES}


def cut(text: str, head: int, tail: int) -> str:
    if len(text) <= head + tail:
        return text
    omitted = len(text) - head - tail
    tail_part = text[-tail:] if tail else ""
    return f"{text[:head]}\n...[{omitted} characters omitted]...\n{tail_part}"


def serialize_message(message: Message, head: int, tail: int) -> str:
    # Concatenated, not a list joined: most messages have no call, and most are short (no
    # cut called).
    original = message.original_content  # ``source_text`` without a property call
    text = message.content if original is None else original
    text = _TAGS[message.role] + (text if len(text) <= head + tail else cut(text, head, tail))
    for call in message.tool_calls:
        text += f"\n[TOOL CALL {call.name}] {cut(call.arguments, head, tail)}"
    # The quoted block must not be closable from inside.
    return _CLOSE.sub("</ turns>", text) if "<" in text else text


def serialize(messages: Sequence[Message], head: int, tail: int) -> list[str]:
    """One entry per message, summaries excluded (they travel as ``previous_summary``)."""
    return [serialize_message(m, head, tail) for m in messages if not m.is_summary]
