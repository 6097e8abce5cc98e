"""The fallback sentence of a compaction-event row (compaction.core.event_text), made from the
same metadata screens render (docs/architecture.md, "Tables", event rows), in zh and en."""

from __future__ import annotations

from typing import Any

import pytest

from compaction.core.event_text import EventName, event_text

DONE = {"removedCount": 12, "tokensBefore": 10_000, "tokensAfter": 2_500}


@pytest.mark.parametrize(
    ("event", "metadata", "language", "expected"),
    [
        ("start", {"stage": "history"}, "en", "Compacting context…"),
        ("start", {}, "zh", "正在压缩上下文..."),  # rows from before the stages: the history's
        ("start", {"stage": "loop"}, "en", "Compacting the task's tool steps…"),
        ("start", {"stage": "loop"}, "zh", "正在压缩当前任务的工具步骤..."),
        (
            "done",
            DONE,
            "en",
            "Context compacted · 12 messages removed · 75% tokens saved",
        ),
        ("done", DONE, "zh", "上下文已压缩 · 移除 12 条消息 · 节省 75% token"),
        (
            "done",
            {**DONE, "stage": "loop"},
            "en",
            "Tool steps compacted · 12 messages into an execution summary · 75% tokens saved",
        ),
        (
            "done",
            {**DONE, "stage": "loop"},
            "zh",
            "工具步骤已压缩 · 12 条消息并入执行摘要 · 节省 75% token",
        ),
        (
            "done",
            {"removedCount": 0},
            "en",
            "Context compacted · 0 messages removed · 0% tokens saved",
        ),
        (
            "restored",
            {"restoredMessages": 7, "restoredPruned": 2},
            None,
            "Compaction undone · 7 messages restored · 2 tool outputs whole again",
        ),
        (
            "restored",
            {"restoredMessages": 7, "restoredPruned": 2},
            "zh",
            "已撤销压缩 · 恢复 7 条消息 · 2 条工具输出还原",
        ),
    ],
)
def test_the_sentence_of_a_row(
    event: EventName, metadata: dict[str, Any], language: str | None, expected: str
) -> None:
    assert event_text(event, metadata, language) == expected


def test_a_failed_row_names_its_code_and_the_detail_when_given() -> None:
    meta = {"code": "no_auxiliary_model", "requestId": "r1"}
    detail = "no auxiliary model: set one on the agent or a default channel"

    assert event_text("failed", meta, "en", detail) == (
        f"Compaction failed [no_auxiliary_model]: {detail}. "
        "You can continue this conversation or start a new one."
    )
    assert event_text("failed", meta, "zh", detail) == (
        f"压缩失败 [no_auxiliary_model]：{detail}  可继续原对话或开新对话"
    )
    assert event_text("failed", meta, "en") == (
        "Compaction failed [no_auxiliary_model]. "
        "You can continue this conversation or start a new one."
    )
