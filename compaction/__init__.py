"""Context compaction for LLM agents: one installed name (docs/architecture.md, "Layers").

The pure core lives in ``compaction.core``; its public names are re-exported here, where users
import them (``from compaction import Message, compact``). The layers above it install as
``compaction.store``, ``.service``, ``.worker``, ``.producers``, ``.gateway``, ``.cli``,
``.migrations`` and ``.testing``.
"""

from importlib.metadata import PackageNotFoundError, version

from compaction.core import (
    LOOP_MARKER,
    SUMMARY_MARKER,
    CompactionConfig,
    CompactionError,
    CompactionResult,
    InvalidConfig,
    InvalidRequest,
    LoopResult,
    Message,
    MessageTooLarge,
    NothingToCompact,
    Staged,
    Summarizer,
    SummaryRequest,
    SummaryTooLong,
    SummaryTooShort,
    SystemPromptTooLarge,
    ToolCall,
    compact,
    compact_loop,
    compact_staged,
    compactable,
    estimate_messages_tokens,
    estimate_tokens,
    first_stage,
    is_loop_summary,
    loop_follows,
    messages_from_dicts,
)

try:
    __version__ = version("compaction")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"

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
    "Staged",
    "Summarizer",
    "SummaryRequest",
    "SummaryTooLong",
    "SummaryTooShort",
    "SystemPromptTooLarge",
    "ToolCall",
    "__version__",
    "compact",
    "compact_loop",
    "compact_staged",
    "compactable",
    "estimate_messages_tokens",
    "estimate_tokens",
    "first_stage",
    "is_loop_summary",
    "loop_follows",
    "messages_from_dicts",
]
