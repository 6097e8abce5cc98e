"""The sentence a compaction-event row holds (docs/architecture.md, "Tables", event rows): the
plain fallback for readers that do not render codes (an export, ``compaction history``).

A row's ``metadata`` is what screens read: its ``event``, ``code`` and figures, rendered in the
reader's own language (the console's table is gateway/static/i18n.js). This is the one place
the server words a row, from that same metadata, in the session's language.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

#: the rows a run leaves (``metadata.event``)
EventName = Literal["start", "done", "failed", "skipped", "restored"]


def event_text(
    event: EventName, metadata: Mapping[str, Any], language: str | None, error: str | None = None
) -> str:
    """``metadata``'s figures as a sentence in ``language`` (``zh``; anything else is English).
    A failed row names its ``code``, and ``error`` (the run's one-line detail) when given."""
    zh = language == "zh"
    if event == "start":
        return _started(zh, metadata.get("stage") == "loop")
    if event == "done":
        return _done(zh, metadata)
    if event == "failed":
        return _failed(zh, str(metadata.get("code", "internal_error")), error)
    if event == "skipped":  # a stage's result not applied (docs/algorithm.md, "Bounds")
        code = metadata.get("code", "not_smaller")
        if zh:
            return f"压缩未应用 [{code}]：结果并不比原内容小，历史保持不变"
        return f"Compaction not applied [{code}]: the result was not smaller; history unchanged"
    messages, pruned = metadata.get("restoredMessages", 0), metadata.get("restoredPruned", 0)
    if zh:
        return f"已撤销压缩 · 恢复 {messages} 条消息 · {pruned} 条工具输出还原"
    return f"Compaction undone · {messages} messages restored · {pruned} tool outputs whole again"


def _started(zh: bool, loop: bool) -> str:
    if loop:
        return "正在压缩当前任务的工具步骤..." if zh else "Compacting the task's tool steps…"
    return "正在压缩上下文..." if zh else "Compacting context…"


def _done(zh: bool, metadata: Mapping[str, Any]) -> str:
    removed = metadata.get("removedCount", 0)
    before, after = metadata.get("tokensBefore", 0), metadata.get("tokensAfter", 0)
    saved = 1 - after / before if before else 0.0
    if metadata.get("stage") == "loop":
        if zh:
            return f"工具步骤已压缩 · {removed} 条消息并入执行摘要 · 节省 {saved:.0%} token"
        return (
            f"Tool steps compacted · {removed} messages into an execution summary · "
            f"{saved:.0%} tokens saved"
        )
    if zh:
        return f"上下文已压缩 · 移除 {removed} 条消息 · 节省 {saved:.0%} token"
    return f"Context compacted · {removed} messages removed · {saved:.0%} tokens saved"


def _failed(zh: bool, code: str, error: str | None) -> str:
    detail = f"：{error}" if zh and error else f": {error}" if error else ""
    if zh:
        return f"压缩失败 [{code}]{detail}  可继续原对话或开新对话"
    return (
        f"Compaction failed [{code}]{detail}. You can continue this conversation or start a new "
        "one."
    )
