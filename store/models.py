"""SQLAlchemy 2 models: the tables of docs/architecture.md, "Tables".

Message order is ``(seq, seq_minor)``: ordinary rows have ``seq_minor = 0``; a summary takes the
``seq`` of the last row it replaced and the session's compaction version as ``seq_minor``, so
that both history views come out in conversation order without renumbering anything.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from compaction.core.config import (
    AUTO_COMPACT_MODES,
    PROTECT_FIRST_N_MAX,
    PROTECT_FIRST_N_MIN,
    STRATEGIES,
    THRESHOLD_PERCENT_MAX,
    THRESHOLD_PERCENT_MIN,
    THRESHOLD_PERCENT_STEP,
    TOKEN_BUDGET_MIN,
    WARN_PERCENT_MAX,
    WARN_PERCENT_MIN,
)
from compaction.core.contract import MAX_SESSION_ID

# SQLite only auto-increments INTEGER PRIMARY KEY.
BigId = BigInteger().with_variant(Integer, "sqlite")
Json = JSON(none_as_null=True)

ROLES = ("system", "user", "assistant", "tool")
PROVIDERS = ("anthropic", "openai", "deepseek", "openai-compatible")
RUN_STATUSES = ("succeeded", "failed", "skipped", "restored")
#: a review's draft (docs/architecture.md, "Review"): written, then applied, discarded or expired
DRAFT_STATUSES = ("ready", "applied", "discarded", "expired")


def sql_list(values: tuple[str, ...]) -> str:
    """``('a', 'b')`` for a CHECK's ``IN``: a tuple's repr would end ``('a',)`` for one value."""
    return "(" + ", ".join(f"'{v}'" for v in values) + ")"


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    pass


class ModelChannel(Base):
    __tablename__ = "model_channel"
    __table_args__ = (
        CheckConstraint(f"provider IN {sql_list(PROVIDERS)}", name="ck_model_channel_provider"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(128), unique=True)
    provider: Mapped[str] = mapped_column(String(32))
    model: Mapped[str] = mapped_column(String(128))
    base_url: Mapped[str | None] = mapped_column(String(512))
    #: the key itself (shown masked) or, preferably, the name of a variable holding it
    api_key: Mapped[str | None] = mapped_column(String(512))
    api_key_env: Mapped[str | None] = mapped_column(String(128))
    is_auxiliary: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    #: optional prices in USD per million tokens, for the cost of a run (the receipt)
    price_input_per_mtok: Mapped[float | None] = mapped_column(Float)
    price_output_per_mtok: Mapped[float | None] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    def __repr__(self) -> str:  # never the key
        return (
            f"ModelChannel(id={self.id!r}, name={self.name!r}, provider={self.provider!r}, "
            f"model={self.model!r}, is_auxiliary={self.is_auxiliary!r})"
        )


class Agent(Base):
    __tablename__ = "agent"
    __table_args__ = (
        CheckConstraint(
            f"compaction_threshold_percent BETWEEN {THRESHOLD_PERCENT_MIN} AND "
            f"{THRESHOLD_PERCENT_MAX} "
            f"AND compaction_threshold_percent % {THRESHOLD_PERCENT_STEP} = 0",
            name="ck_agent_threshold",
        ),
        CheckConstraint(
            f"compaction_protect_first_n BETWEEN {PROTECT_FIRST_N_MIN} AND {PROTECT_FIRST_N_MAX}",
            name="ck_agent_protect",
        ),
        CheckConstraint(f"compaction_strategy IN {sql_list(STRATEGIES)}", name="ck_agent_strategy"),
        CheckConstraint(f"token_budget >= {TOKEN_BUDGET_MIN}", name="ck_agent_token_budget"),
        CheckConstraint(
            f"auto_compact IN {sql_list(AUTO_COMPACT_MODES)}", name="ck_agent_auto_compact"
        ),
        CheckConstraint(
            f"warn_percent BETWEEN {WARN_PERCENT_MIN} AND {WARN_PERCENT_MAX}",
            name="ck_agent_warn_percent",
        ),
    )

    id: Mapped[str] = mapped_column(String(128), primary_key=True)
    name: Mapped[str | None] = mapped_column(String(128))
    model: Mapped[str | None] = mapped_column(String(128))
    context_window: Mapped[int | None] = mapped_column(Integer)
    auxiliary_model_channel_id: Mapped[int | None] = mapped_column(
        ForeignKey("model_channel.id", ondelete="SET NULL")
    )
    compaction_strategy: Mapped[str] = mapped_column(
        String(32), default="lossy", server_default="lossy"
    )
    #: ``None``: the system setting applies (docs/architecture.md, "Settings")
    compaction_threshold_percent: Mapped[int | None] = mapped_column(Integer)
    compaction_protect_first_n: Mapped[int | None] = mapped_column(Integer)
    #: a fixed threshold in tokens instead of the percentage; ``None``: the system setting
    token_budget: Mapped[int | None] = mapped_column(Integer)
    #: ``on`` | ``ask`` | ``off``; ``None``: the system setting (COMPACTION_AUTO_COMPACT)
    auto_compact: Mapped[str | None] = mapped_column(String(8))
    #: the warning level in percent of the window; ``None``: the system setting
    warn_percent: Mapped[int | None] = mapped_column(Integer)
    #: the channel that answers chat turns; ``None``: the gateway's default chat model. No ON
    #: DELETE action (SQLite reflects none for a column added by ALTER): deleting a channel
    #: clears it first (``compaction.store.channels``)
    chat_channel_id: Mapped[int | None] = mapped_column(ForeignKey("model_channel.id"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ChatSession(Base):
    __tablename__ = "chat_session"
    __table_args__ = (CheckConstraint("last_seq >= 0", name="ck_chat_session_last_seq"),)

    id: Mapped[str] = mapped_column(String(MAX_SESSION_ID), primary_key=True)
    agent_id: Mapped[str | None] = mapped_column(ForeignKey("agent.id", ondelete="SET NULL"))
    model: Mapped[str | None] = mapped_column(String(128))
    #: the name a user sees (an imported transcript's file name; renamable); ``None``: the id
    title: Mapped[str | None] = mapped_column(String(200))
    #: fencing token: bumped by every compaction and restore; a stale writer is refused
    compaction_version: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    #: the last ``seq`` handed out; appends reserve a block atomically
    last_seq: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Message(Base):
    __tablename__ = "message"
    __table_args__ = (
        UniqueConstraint("session_id", "seq", "seq_minor", name="uq_message_order"),
        Index("ix_message_session_compacted", "session_id", "compacted_at"),
        Index("ix_message_session_summary", "session_id", "is_compaction_summary"),
        Index("ix_message_compacted_into", "compacted_into_id"),
        Index("ix_message_session_tool_call", "session_id", "tool_call_id"),
        CheckConstraint(f"role IN {sql_list(ROLES)}", name="ck_message_role"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    session_id: Mapped[str] = mapped_column(ForeignKey("chat_session.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(BigInteger)
    seq_minor: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    role: Mapped[str] = mapped_column(String(16))
    content: Mapped[str] = mapped_column(Text)
    tool_calls: Mapped[list[dict[str, Any]] | None] = mapped_column(Json)
    tool_call_id: Mapped[str | None] = mapped_column(String(256))
    meta: Mapped[dict[str, Any] | None] = mapped_column("metadata", Json)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    compacted_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    compacted_into_id: Mapped[int | None] = mapped_column(
        ForeignKey("message.id", ondelete="SET NULL")
    )
    is_compaction_summary: Mapped[bool] = mapped_column(
        Boolean, default=False, server_default=false()
    )
    pruned_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    pruned_run_id: Mapped[int | None] = mapped_column(
        ForeignKey("compaction_run.id", ondelete="SET NULL")
    )
    #: pinned by the user: never summarized or pruned (docs/architecture.md, "Pins")
    pinned: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())


class DictType(Base):
    __tablename__ = "dict_type"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(128))
    key: Mapped[str] = mapped_column(String(128), unique=True)


class DictInfo(Base):
    __tablename__ = "dict_info"
    __table_args__ = (UniqueConstraint("type_id", "name", name="uq_dict_info_name"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    type_id: Mapped[int] = mapped_column(ForeignKey("dict_type.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(128))
    value: Mapped[str | None] = mapped_column(Text)


class CompactionRun(Base):
    __tablename__ = "compaction_run"
    __table_args__ = (
        Index("ix_compaction_run_session", "session_id", "id"),
        CheckConstraint(f"status IN {sql_list(RUN_STATUSES)}", name="ck_compaction_run_status"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    session_id: Mapped[str] = mapped_column(ForeignKey("chat_session.id", ondelete="CASCADE"))
    request_id: Mapped[str | None] = mapped_column(String(64))
    reason: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16))
    code: Mapped[str | None] = mapped_column(String(64))
    error: Mapped[str | None] = mapped_column(Text)
    language: Mapped[str | None] = mapped_column(String(8))
    tokens_before: Mapped[int | None] = mapped_column(Integer)
    tokens_after: Mapped[int | None] = mapped_column(Integer)
    removed_count: Mapped[int | None] = mapped_column(Integer)
    pruned_count: Mapped[int | None] = mapped_column(Integer)
    # No foreign key: message already points at compaction_run (pruned_run_id), and a cycle
    # would need ALTERs that SQLite cannot do.
    summary_message_id: Mapped[int | None] = mapped_column(BigInteger)
    #: the version this run produced (the summary's ``seq_minor``)
    compaction_version: Mapped[int | None] = mapped_column(Integer)
    model: Mapped[str | None] = mapped_column(String(128))
    input_tokens: Mapped[int | None] = mapped_column(Integer)
    output_tokens: Mapped[int | None] = mapped_column(Integer)
    durations: Mapped[dict[str, float] | None] = mapped_column(Json)
    worker: Mapped[str | None] = mapped_column(String(128))
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    restored_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    #: what survived (docs/architecture.md, "Receipt"): identifier and user-message lists
    receipt: Mapped[dict[str, Any] | None] = mapped_column(Json)
    #: USD, from the auxiliary channel's prices; ``None`` when it has none
    cost: Mapped[float | None] = mapped_column(Float)


class CompactionDraft(Base):
    """A compaction written for review, not applied (docs/architecture.md, "Review"): the
    history is untouched until the user applies it, fenced by ``base_version``."""

    __tablename__ = "compaction_draft"
    __table_args__ = (
        Index("ix_compaction_draft_session", "session_id", "id"),
        CheckConstraint(f"status IN {sql_list(DRAFT_STATUSES)}", name="ck_compaction_draft_status"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    session_id: Mapped[str] = mapped_column(ForeignKey("chat_session.id", ondelete="CASCADE"))
    request_id: Mapped[str | None] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16), default="ready", server_default="ready")
    focus: Mapped[str | None] = mapped_column(Text)
    summary: Mapped[str] = mapped_column(Text)
    #: the user edited ``summary`` (applied as written, not regenerated)
    edited: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    #: the session's compaction version the draft was written against (the fence)
    base_version: Mapped[int] = mapped_column(Integer)
    #: what applying it writes: the compacted and pruned message ids, the stage, the language
    plan: Mapped[dict[str, Any]] = mapped_column(Json)
    receipt: Mapped[dict[str, Any] | None] = mapped_column(Json)
    tokens_before: Mapped[int] = mapped_column(Integer)
    tokens_after: Mapped[int] = mapped_column(Integer)
    model: Mapped[str | None] = mapped_column(String(128))
    input_tokens: Mapped[int | None] = mapped_column(Integer)
    output_tokens: Mapped[int | None] = mapped_column(Integer)
    cost: Mapped[float | None] = mapped_column(Float)
    #: the run its apply wrote
    run_id: Mapped[int | None] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ContextTokenStat(Base):
    """One model call's context: its tokens per segment and the compaction decision taken
    before it (docs/architecture.md, "Tables")."""

    __tablename__ = "context_token_stat"
    __table_args__ = (Index("ix_context_token_stat_session", "session_id", "id"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    session_id: Mapped[str] = mapped_column(ForeignKey("chat_session.id", ondelete="CASCADE"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    model: Mapped[str | None] = mapped_column(String(128))
    #: segment name -> estimated tokens (compaction.core.segments.SEGMENTS)
    tokens: Mapped[dict[str, int]] = mapped_column(Json)
    total_tokens: Mapped[int] = mapped_column(Integer)
    threshold_tokens: Mapped[int | None] = mapped_column(Integer)
    #: the pre-call hook's status (``below_threshold``, ``enqueued``, ``compacted``...)
    decision: Mapped[str] = mapped_column(String(32))
    #: the chat model's usage for the call: inputTokens, outputTokens
    usage: Mapped[dict[str, int] | None] = mapped_column(Json)
