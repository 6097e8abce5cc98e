"""Phase 4: ``[...head, summary, ...tail]`` with orphans repaired (seed §3, phase 4).

A tool result whose call is gone is dropped; a call whose result is gone gets a placeholder
result, placed after the results it still has, so the list is valid for both providers.
"""

from __future__ import annotations

from collections.abc import Sequence

from compaction.messages import Message

ORPHAN_RESULT = {
    "zh": "[结果来自已压缩的历史 -- 见上方摘要]",
    "en": "[Result is in the compacted history -- see the summary above]",
}


def assemble(
    head: Sequence[Message], summary: Message, tail: Sequence[Message], placeholder: str
) -> list[Message]:
    joined = [*head, summary, *tail]
    called = {call.id for message in joined for call in message.tool_calls}
    answered = {m.tool_call_id for m in joined if m.role == "tool"}
    out: list[Message] = []
    missing: list[str] = []

    def flush() -> None:
        out.extend(Message(role="tool", content=placeholder, tool_call_id=i) for i in missing)
        missing.clear()

    for message in joined:
        if message.role == "tool":
            if message.tool_call_id in called:
                out.append(message)
            continue
        flush()
        out.append(message)
        missing.extend(call.id for call in message.tool_calls if call.id not in answered)
    flush()
    return out
