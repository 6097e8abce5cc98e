"""The pure compaction core: no Redis, no SQL, no network (docs/architecture.md, "Layers", "The
algorithm")."""

from compaction.core.config import CompactionConfig
from compaction.core.engine import (
    CompactionResult,
    Summarizer,
    SummaryRequest,
    compact,
    compactable,
)
from compaction.core.errors import (
    CompactionError,
    InvalidConfig,
    InvalidRequest,
    MessageTooLarge,
    NothingToCompact,
    PinsOverThreshold,
    SummaryTooLong,
    SummaryTooShort,
    SystemPromptTooLarge,
)
from compaction.core.loop import LoopResult, compact_loop, is_loop_summary
from compaction.core.messages import SUMMARY_MARKER, Message, ToolCall, messages_from_dicts
from compaction.core.prompts_loop import LOOP_MARKER
from compaction.core.receipt import SpanReceipt, compacted_span, receipt_of
from compaction.core.staged import Staged, compact_staged, first_stage, loop_follows
from compaction.core.tokens import estimate_messages_tokens, estimate_tokens

__all__ = [
    "LOOP_MARKER",
    "SUMMARY_MARKER",
    "CompactionConfig",
    "CompactionError",
    "CompactionResult",
    "InvalidConfig",
    "InvalidRequest",
    "LoopResult",
    "Message",
    "MessageTooLarge",
    "NothingToCompact",
    "PinsOverThreshold",
    "SpanReceipt",
    "Staged",
    "Summarizer",
    "SummaryRequest",
    "SummaryTooLong",
    "SummaryTooShort",
    "SystemPromptTooLarge",
    "ToolCall",
    "compact",
    "compact_loop",
    "compact_staged",
    "compactable",
    "compacted_span",
    "estimate_messages_tokens",
    "estimate_tokens",
    "first_stage",
    "is_loop_summary",
    "loop_follows",
    "messages_from_dicts",
    "receipt_of",
]
