"""What the user's screen says about a compaction (docs/architecture.md, "Events"), in the session's
language."""

from __future__ import annotations

from compaction.core.contract import Stage
from compaction.core.prompts import Language


def started(language: Language, stage: Stage = "history") -> str:
    if stage == "loop":
        return (
            "正在压缩当前任务的工具步骤..."
            if language == "zh"
            else "Compacting the task's tool steps…"
        )
    return "正在压缩上下文..." if language == "zh" else "Compacting context…"


def done(language: Language, removed: int, saved: float, stage: Stage = "history") -> str:
    if stage == "loop":
        if language == "zh":
            return f"工具步骤已压缩 · {removed} 条消息并入执行摘要 · 节省 {saved:.0%} token"
        return (
            f"Tool steps compacted · {removed} messages into an execution summary · "
            f"{saved:.0%} tokens saved"
        )
    if language == "zh":
        return f"上下文已压缩 · 移除 {removed} 条消息 · 节省 {saved:.0%} token"
    return f"Context compacted · {removed} messages removed · {saved:.0%} tokens saved"


def failed(language: Language, error: str) -> str:
    if language == "zh":
        return f"压缩失败：{error}  可继续原对话或开新对话"
    return f"Compaction failed: {error}. You can continue this conversation or start a new one."
