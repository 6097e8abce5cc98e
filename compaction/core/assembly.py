"""Phase 4: ``[...head, summary, ...tail]`` with orphans repaired (docs/architecture.md, "The
algorithm", phase 4).

A tool result whose call is gone is dropped; a call whose result is gone gets a placeholder
result, placed after the results it still has, so the list is valid for both providers.
"""

from __future__ import annotations

from collections.abc import Sequence

from compaction.core.messages import Message

ORPHAN_RESULT = {
    "zh": "[结果来自已压缩的历史 -- 见上方摘要]",
    "en": "[Result is in the compacted history -- see the summary above]",
}


def assemble(
    head: Sequence[Message], summary: Message, tail: Sequence[Message], placeholder: str
) -> list[Message]:
    out: list[Message] = []
    open_calls: list[str] = []  # calls of the last assistant turn not yet answered

    def close_turn() -> None:
        out.extend(Message(role="tool", content=placeholder, tool_call_id=i) for i in open_calls)
        open_calls.clear()

    for message in [*head, summary, *tail]:
        if message.role == "tool":
            # Kept only right after the turn that called it (OpenAI and Anthropic both ask so).
            if message.tool_call_id in open_calls:
                open_calls.remove(message.tool_call_id)
                out.append(message)
            continue
        close_turn()
        out.append(message)
        open_calls.extend(call.id for call in message.tool_calls)
    close_turn()
    return out
