"""The skip/stage decision the producers and the worker share (compaction.core.decision;
docs/architecture.md, "The job", phases of a run, step 4): its table, and which facts it reads
for each answer (a fact it does not need costs a Redis or database read)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from compaction.core.contract import Reason, Stage
from compaction.core.decision import Busy, decide

THRESHOLD = 1_000


class Facts:
    """Answers for the decision, recording which it asked."""

    def __init__(
        self, *, busy: Busy | None = None, suppressed: bool = False, stage: Stage | None = "history"
    ) -> None:
        self.answers: dict[str, Any] = {"busy": busy, "suppressed": suppressed, "stage": stage}
        self.asked: list[str] = []

    def reader(self, name: str) -> Callable[[], Any]:
        def read() -> Any:
            self.asked.append(name)
            return self.answers[name]

        return read

    def decide(self, reason: Reason, tokens: int) -> str:
        return decide(
            reason,
            tokens,
            THRESHOLD,
            busy=self.reader("busy"),
            suppressed=self.reader("suppressed"),
            first_stage=self.reader("stage"),
        )


@pytest.mark.parametrize(
    ("reason", "tokens", "facts", "expected", "asked"),
    [
        # auto: the threshold first, then the queue, the anti-loop rule, the segments
        ("auto", 999, {}, "below_threshold", []),
        ("auto", 1_000, {}, "history", ["busy", "suppressed", "stage"]),
        ("auto", 5_000, {"stage": "loop"}, "loop", ["busy", "suppressed", "stage"]),
        ("auto", 5_000, {"busy": "already_pending"}, "already_pending", ["busy"]),
        ("auto", 5_000, {"busy": "in_flight"}, "in_flight", ["busy"]),
        ("auto", 5_000, {"busy": "in_flight", "suppressed": True}, "in_flight", ["busy"]),
        ("auto", 5_000, {"suppressed": True}, "suppressed", ["busy", "suppressed"]),
        (
            "auto",
            5_000,
            {"stage": None},
            "nothing_to_compact",
            ["busy", "suppressed", "stage"],
        ),
        ("auto", 999, {"stage": None, "suppressed": True}, "below_threshold", []),
        # manual: whatever the size, the queue and the anti-loop rule; only the segments
        ("manual", 10, {}, "history", ["stage"]),
        ("manual", 5_000, {"suppressed": True, "busy": "in_flight"}, "history", ["stage"]),
        ("manual", 5_000, {"stage": "loop"}, "loop", ["stage"]),
        ("manual", 10, {"stage": None}, "nothing_to_compact", ["stage"]),
    ],
)
def test_the_decision_table(
    reason: Reason, tokens: int, facts: dict[str, Any], expected: str, asked: list[str]
) -> None:
    read = Facts(**facts)
    assert read.decide(reason, tokens) == expected
    assert read.asked == asked


def test_without_a_queue_to_read_nothing_is_busy() -> None:
    """The worker asks under the session's lock: no ``busy`` reader, nothing queued."""
    decided = decide(
        "auto", 5_000, THRESHOLD, suppressed=lambda: False, first_stage=lambda: "history"
    )
    assert decided == "history"
