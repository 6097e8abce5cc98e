"""context_token_stat: per-turn token statistics

After each model call the gateway records the context's tokens per segment (system, history,
loop, state), the threshold and the compaction decision taken before the call
(docs/architecture.md, "Tables"). Rows go with their session (ON DELETE CASCADE).

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01 19:15:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "context_token_stat",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("session_id", sa.String(length=128), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("model", sa.String(length=128), nullable=True),
        sa.Column("tokens", sa.JSON(none_as_null=True), nullable=False),
        sa.Column("total_tokens", sa.Integer(), nullable=False),
        sa.Column("threshold_tokens", sa.Integer(), nullable=True),
        sa.Column("decision", sa.String(length=32), nullable=False),
        sa.Column("usage", sa.JSON(none_as_null=True), nullable=True),
        sa.ForeignKeyConstraint(["session_id"], ["chat_session.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("context_token_stat", schema=None) as batch_op:
        batch_op.create_index("ix_context_token_stat_session", ["session_id", "id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("context_token_stat", schema=None) as batch_op:
        batch_op.drop_index("ix_context_token_stat_session")
    op.drop_table("context_token_stat")
