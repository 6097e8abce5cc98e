"""A stage's receipt as the worker records it (docs/architecture.md, "Receipt"): what the core
counts (``compaction.core.receipt``) with what the stage cost, the auxiliary model's tokens from
the provider's usage, priced by its channel. The run record keeps the lists, ``compaction_done``
the counts; a review's draft takes the same."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from compaction.core.config import CompactionConfig
from compaction.core.contract import Receipt
from compaction.core.messages import Message
from compaction.core.receipt import SpanReceipt, compacted_span, cost_of, receipt_of
from compaction.core.result import CompactionResult
from compaction.worker import metrics
from compaction.worker.summarizers import Written


@dataclass(frozen=True, slots=True)
class StageReceipt:
    span: SpanReceipt
    #: the auxiliary model's tokens; ``None`` when no model wrote the stage's summary
    input_tokens: int | None
    output_tokens: int | None
    #: USD; ``None`` when the channel has no price, or no model was called
    cost: float | None

    def counts(self) -> Receipt:
        return self.span.counts(self.input_tokens, self.output_tokens, self.cost)

    def lists(self) -> dict[str, Any]:
        return self.span.lists()


def stage_receipt(
    messages: Sequence[Message],
    result: CompactionResult,
    config: CompactionConfig,
    written: Written,
) -> StageReceipt:
    """The receipt of ``result``, computed on ``messages`` (the stage's input)."""
    span = receipt_of(
        compacted_span(messages, result), result, redact_secrets=config.redact_secrets
    )
    tokens_in = tokens_out = cost = None
    if written.summarizer == "model":
        tokens_in, tokens_out = result.input_tokens, result.output_tokens
        cost = cost_of(tokens_in, tokens_out, *written.prices)
    return StageReceipt(span, tokens_in, tokens_out, cost)


def count(receipt: StageReceipt) -> None:
    """An applied stage's receipt in the metrics (docs/architecture.md, "Logs and metrics")."""
    span = receipt.span
    metrics.record_receipt(
        span.kept, span.total, receipt.input_tokens or 0, receipt.output_tokens or 0, receipt.cost
    )
