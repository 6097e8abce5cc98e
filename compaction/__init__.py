"""The pure compaction core: no Redis, no SQL, no network (docs/architecture.md, "Layers", "The
algorithm")."""

from compaction.config import CompactionConfig
from compaction.engine import CompactionResult, Summarizer, SummaryRequest, compact, compactable
from compaction.errors import (
    CompactionError,
    InvalidConfig,
    InvalidRequest,
    MessageTooLarge,
    NothingToCompact,
    SummaryTooLong,
    SummaryTooShort,
    SystemPromptTooLarge,
)
from compaction.messages import SUMMARY_MARKER, Message, ToolCall, messages_from_dicts
from compaction.tokens import estimate_messages_tokens, estimate_tokens

__all__ = [
    "SUMMARY_MARKER",
    "CompactionConfig",
    "CompactionError",
    "CompactionResult",
    "InvalidConfig",
    "InvalidRequest",
    "Message",
    "MessageTooLarge",
    "NothingToCompact",
    "Summarizer",
    "SummaryRequest",
    "SummaryTooLong",
    "SummaryTooShort",
    "SystemPromptTooLarge",
    "ToolCall",
    "compact",
    "compactable",
    "estimate_messages_tokens",
    "estimate_tokens",
    "messages_from_dicts",
]
