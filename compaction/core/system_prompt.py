"""A system prompt alone at or over the threshold (docs/algorithm.md, "Bounds"): the seed's
"系统提示本身就超阈值：抛'系统提示过长'错误，引导精简". No compaction can make room for it (the
system prompt is the protected head, never summarized), so every way a compaction or a turn
starts refuses it with ``system_prompt_too_large`` and the advice to shorten it, in the user's
language: the engine, the producers' check before a model call, the gateway's turn (before the
user's message is stored) and ``/compact`` (the producers' manual request and the worker).
"""

from __future__ import annotations

from collections.abc import Sequence

from compaction.core.errors import SystemPromptTooLarge
from compaction.core.messages import Message
from compaction.core.prompts import Language


def leading_system_tokens(messages: Sequence[Message], counts: Sequence[int]) -> int:
    """The tokens of the leading system messages (``counts``: each message's estimate)."""
    total = 0
    for message, count in zip(messages, counts, strict=False):
        if message.role != "system":
            break
        total += count
    return total


def refuse_system_prompt(tokens: int, threshold: int, language: Language) -> None:
    """``SystemPromptTooLarge`` when the system prompt's ``tokens`` reach ``threshold``, with
    the advice in ``language`` (``summary_language`` of the conversation)."""
    if tokens < threshold:
        return
    if language == "zh":
        raise SystemPromptTooLarge(
            f"系统提示过长：仅系统提示就约 {tokens} tokens，达到本会话的压缩阈值 {threshold} "
            "tokens，压缩无法为对话腾出空间：请精简系统提示"
        )
    raise SystemPromptTooLarge(
        f"the system prompt alone is ~{tokens} tokens, over this session's compaction threshold "
        f"of {threshold}: no compaction can make room for the conversation; shorten the system "
        "prompt"
    )
