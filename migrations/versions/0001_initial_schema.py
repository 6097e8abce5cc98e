"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-30 06:47:11.210694
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "dict_type",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("key", sa.String(length=128), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("key"),
    )
    op.create_table(
        "model_channel",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("provider", sa.String(length=32), nullable=False),
        sa.Column("model", sa.String(length=128), nullable=False),
        sa.Column("base_url", sa.String(length=512), nullable=True),
        sa.Column("api_key", sa.String(length=512), nullable=True),
        sa.Column("api_key_env", sa.String(length=128), nullable=True),
        sa.Column("is_auxiliary", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "provider IN ('anthropic', 'openai', 'deepseek', 'openai-compatible')",
            name="ck_model_channel_provider",
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    op.create_table(
        "agent",
        sa.Column("id", sa.String(length=128), nullable=False),
        sa.Column("name", sa.String(length=128), nullable=True),
        sa.Column("model", sa.String(length=128), nullable=True),
        sa.Column("context_window", sa.Integer(), nullable=True),
        sa.Column(
            "auxiliary_model_channel_id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            nullable=True,
        ),
        sa.Column(
            "compaction_strategy", sa.String(length=32), server_default="lossy", nullable=False
        ),
        sa.Column(
            "compaction_threshold_percent", sa.Integer(), server_default="70", nullable=False
        ),
        sa.Column("compaction_protect_first_n", sa.Integer(), server_default="3", nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("compaction_strategy IN ('lossy')", name="ck_agent_strategy"),
        sa.CheckConstraint("compaction_protect_first_n BETWEEN 1 AND 10", name="ck_agent_protect"),
        sa.CheckConstraint(
            "compaction_threshold_percent BETWEEN 30 AND 95 "
            "AND compaction_threshold_percent % 5 = 0",
            name="ck_agent_threshold",
        ),
        sa.ForeignKeyConstraint(
            ["auxiliary_model_channel_id"], ["model_channel.id"], ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "dict_info",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("type_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("value", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["type_id"], ["dict_type.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("type_id", "name", name="uq_dict_info_name"),
    )
    op.create_table(
        "chat_session",
        sa.Column("id", sa.String(length=128), nullable=False),
        sa.Column("agent_id", sa.String(length=128), nullable=True),
        sa.Column("model", sa.String(length=128), nullable=True),
        sa.Column("compaction_version", sa.Integer(), server_default="0", nullable=False),
        sa.Column("last_seq", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("last_seq >= 0", name="ck_chat_session_last_seq"),
        sa.ForeignKeyConstraint(["agent_id"], ["agent.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "compaction_run",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("session_id", sa.String(length=128), nullable=False),
        sa.Column("request_id", sa.String(length=64), nullable=True),
        sa.Column("reason", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("code", sa.String(length=64), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("language", sa.String(length=8), nullable=True),
        sa.Column("tokens_before", sa.Integer(), nullable=True),
        sa.Column("tokens_after", sa.Integer(), nullable=True),
        sa.Column("removed_count", sa.Integer(), nullable=True),
        sa.Column("pruned_count", sa.Integer(), nullable=True),
        sa.Column("summary_message_id", sa.BigInteger(), nullable=True),
        sa.Column("compaction_version", sa.Integer(), nullable=True),
        sa.Column("model", sa.String(length=128), nullable=True),
        sa.Column("input_tokens", sa.Integer(), nullable=True),
        sa.Column("output_tokens", sa.Integer(), nullable=True),
        sa.Column("durations", sa.JSON(none_as_null=True), nullable=True),
        sa.Column("worker", sa.String(length=128), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("restored_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "status IN ('succeeded', 'failed', 'skipped', 'restored')",
            name="ck_compaction_run_status",
        ),
        sa.ForeignKeyConstraint(["session_id"], ["chat_session.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("compaction_run", schema=None) as batch_op:
        batch_op.create_index("ix_compaction_run_session", ["session_id", "id"], unique=False)

    op.create_table(
        "message",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("session_id", sa.String(length=128), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("seq_minor", sa.Integer(), server_default="0", nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("tool_calls", sa.JSON(none_as_null=True), nullable=True),
        sa.Column("tool_call_id", sa.String(length=256), nullable=True),
        sa.Column("metadata", sa.JSON(none_as_null=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("compacted_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column(
            "compacted_into_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True
        ),
        sa.Column("is_compaction_summary", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("pruned_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column(
            "pruned_run_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True
        ),
        sa.CheckConstraint(
            "role IN ('system', 'user', 'assistant', 'tool')", name="ck_message_role"
        ),
        sa.ForeignKeyConstraint(["compacted_into_id"], ["message.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["pruned_run_id"], ["compaction_run.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["session_id"], ["chat_session.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("session_id", "seq", "seq_minor", name="uq_message_order"),
    )
    with op.batch_alter_table("message", schema=None) as batch_op:
        batch_op.create_index("ix_message_compacted_into", ["compacted_into_id"], unique=False)
        batch_op.create_index(
            "ix_message_session_compacted", ["session_id", "compacted_at"], unique=False
        )
        batch_op.create_index(
            "ix_message_session_summary", ["session_id", "is_compaction_summary"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("message", schema=None) as batch_op:
        batch_op.drop_index("ix_message_session_summary")
        batch_op.drop_index("ix_message_session_compacted")
        batch_op.drop_index("ix_message_compacted_into")

    op.drop_table("message")
    with op.batch_alter_table("compaction_run", schema=None) as batch_op:
        batch_op.drop_index("ix_compaction_run_session")

    op.drop_table("compaction_run")
    op.drop_table("chat_session")
    op.drop_table("dict_info")
    op.drop_table("agent")
    op.drop_table("model_channel")
    op.drop_table("dict_type")
