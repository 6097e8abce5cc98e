"""Plain records the store hands out (rows never leave a database session)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pydantic import SecretStr

from compaction.messages import Message

View = Literal["compacted", "full"]
EVENT_TYPE = "compaction_event"


@dataclass(slots=True)  # not frozen: built 10,000 at a time on the hot path, twice as fast
class StoredMessage:
    """A message with its row fields. In the compacted view a pruned tool row's ``message``
    shows the placeholder and carries the original as ``original_content``."""

    message: Message
    seq: int
    seq_minor: int
    created_at: datetime
    compacted_at: datetime | None = None
    compacted_into_id: int | None = None
    is_compaction_summary: bool = False
    pruned_at: datetime | None = None
    metadata: dict[str, Any] | None = None

    @property
    def id(self) -> int:
        assert self.message.id is not None
        return self.message.id

    @property
    def is_event(self) -> bool:
        return bool(self.metadata and self.metadata.get("systemType") == EVENT_TYPE)


@dataclass(frozen=True, slots=True)
class SessionInfo:
    id: str
    agent_id: str | None
    model: str | None
    compaction_version: int
    last_seq: int


@dataclass(frozen=True, slots=True)
class CompactionWrite:
    """Everything one compaction writes, in one transaction.

    ``first_seq``/``last_seq`` bound the middle (inclusive); the rows there that are still
    visible are marked by range, never by a list of ids. ``expected_removed`` is how many rows
    the core replaced: a different count means the history changed underneath, and nothing is
    written. ``pruned_ids`` are rows kept in the context with a placeholder (the tail's).
    """

    session_id: str
    expected_version: int
    first_seq: int
    last_seq: int
    expected_removed: int
    summary: str
    reason: str = "manual"
    request_id: str | None = None
    pruned_ids: Sequence[int] = ()
    language: str = "en"
    tokens_before: int | None = None
    tokens_after: int | None = None
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    durations: dict[str, float] = field(default_factory=dict)
    worker: str | None = None
    started_at: datetime | None = None
    #: the done event row for the UI (seed §8.3), written in the same transaction
    event_text: str | None = None
    event_payload: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class AppliedCompaction:
    run_id: int
    summary_message_id: int
    removed_count: int
    pruned_count: int
    version: int


@dataclass(frozen=True, slots=True)
class RunRecord:
    id: int
    session_id: str
    request_id: str | None
    reason: str
    status: str
    code: str | None
    error: str | None
    tokens_before: int | None
    tokens_after: int | None
    removed_count: int | None
    pruned_count: int | None
    summary_message_id: int | None
    model: str | None
    input_tokens: int | None
    output_tokens: int | None
    durations: dict[str, float] | None
    worker: str | None
    finished_at: datetime
    restored_at: datetime | None


@dataclass(frozen=True, slots=True)
class ChannelConfig:
    """A resolved model channel. The key is a ``SecretStr``: its repr and str are masked."""

    id: int
    name: str
    provider: str
    model: str
    base_url: str | None
    api_key: SecretStr | None
    api_key_env: str | None
    is_auxiliary: bool


@dataclass(frozen=True, slots=True)
class AgentSettings:
    id: str
    model: str | None
    context_window: int | None
    auxiliary_model_channel_id: int | None
    compaction_strategy: str
    compaction_threshold_percent: int
    compaction_protect_first_n: int


def mask(key: str) -> str:
    """How a stored key is shown: enough to recognise it, never enough to use it."""
    return f"{key[:3]}…{key[-4:]}" if len(key) >= 12 else "…"
