"""What a compaction stage returns, and its per-phase clock (docs/architecture.md, "The
algorithm"): shared by the history stage (``compaction/core/engine.py``) and the loop stage
(``compaction/core/loop.py``)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from compaction.core.messages import Message
from compaction.core.prompts import Language
from compaction.core.summary import Summary


@dataclass
class CompactionResult:
    messages: list[Message]
    tokens_before: int
    tokens_after: int
    summarized: bool
    compressed_ids: list[int] = field(default_factory=list)
    removed_count: int = 0
    #: ids of the middle's messages kept verbatim before the summary (pins; docs/algorithm.md)
    kept_ids: list[int] = field(default_factory=list)
    pruned_ids: list[int] = field(default_factory=list)
    pruned_count: int = 0
    summary_text: str = ""
    summary_message: Message | None = None
    language: Language = "en"
    #: index range of the input that the summary replaced, ``(start, end)``; empty when none
    middle: tuple[int, int] = (0, 0)
    chunks: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    ledger_items: int = 0
    ledger_dropped: int = 0
    timings: dict[str, float] = field(default_factory=dict)


def summary_fields(summary: Summary, message: Message) -> dict[str, Any]:
    """A ``CompactionResult``'s fields that the summary sets (both stages' results)."""
    return {
        "summary_text": summary.text,
        "summary_message": message,
        "chunks": summary.chunks,
        "input_tokens": summary.input_tokens,
        "output_tokens": summary.output_tokens,
        "ledger_items": summary.ledger_items,
        "ledger_dropped": summary.ledger_dropped,
    }


class PhaseClock:
    """Seconds per phase, for the run's record and the log (the loop stage uses it too)."""

    def __init__(self) -> None:
        self.timings: dict[str, float] = {}
        self._last = time.perf_counter()

    def lap(self, phase: str) -> None:
        now = time.perf_counter()
        self.timings[phase] = self.timings.get(phase, 0.0) + now - self._last
        self._last = now
