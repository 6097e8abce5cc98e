"""Step 14: the gate, receipts, pins, review drafts, session titles, chat channels, prices

- ``agent.auto_compact`` (``on`` | ``ask`` | ``off``), ``agent.warn_percent`` and
  ``agent.chat_channel_id``: blank, the system settings apply (docs/architecture.md, "Settings").
- ``model_channel.price_input_per_mtok`` / ``price_output_per_mtok``: a run's cost.
- ``chat_session.title``: the name a user sees.
- ``message.pinned``: never summarized or pruned.
- ``compaction_run.receipt`` and ``cost``: what survived and what it cost.
- ``compaction_draft``: a compaction written for review.

Every new column is nullable or has a server default: existing rows keep their behaviour
(``autoCompact: on`` for users who touch nothing). Columns are added with plain ``ALTER TABLE
... ADD COLUMN`` (checks and references inline): SQLite adds them without copying a table (a
copy would run the ON DELETE actions of the tables that point at it; see 0003). SQLite reflects no
ON DELETE action of a column added so: ``agent.chat_channel_id`` has none, and deleting a channel
clears it first (``compaction.store.channels``).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-03 13:10:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ADDED = (
    (
        "agent",
        "auto_compact VARCHAR(8) "
        "CONSTRAINT ck_agent_auto_compact CHECK (auto_compact IN ('on', 'ask', 'off'))",
    ),
    (
        "agent",
        "warn_percent INTEGER "
        "CONSTRAINT ck_agent_warn_percent CHECK (warn_percent BETWEEN 5 AND 90)",
    ),
    ("agent", "chat_channel_id {bigint} REFERENCES model_channel (id)"),
    ("model_channel", "price_input_per_mtok FLOAT"),
    ("model_channel", "price_output_per_mtok FLOAT"),
    ("chat_session", "title VARCHAR(200)"),
    ("message", "pinned BOOLEAN DEFAULT {false} NOT NULL"),
    ("compaction_run", "receipt {json}"),
    ("compaction_run", "cost FLOAT"),
)


def upgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    words = {
        "bigint": "INTEGER" if sqlite else "BIGINT",
        "false": "0" if sqlite else "false",
        "json": "JSON",
    }
    for table, column in ADDED:
        op.execute(f"ALTER TABLE {table} ADD COLUMN {column.format(**words)}")
    id_type = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
    op.create_table(
        "compaction_draft",
        sa.Column("id", id_type, primary_key=True, autoincrement=True),
        sa.Column(
            "session_id",
            sa.String(length=128),
            sa.ForeignKey("chat_session.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("request_id", sa.String(length=64), nullable=True),
        sa.Column("status", sa.String(length=16), server_default="ready", nullable=False),
        sa.Column("focus", sa.Text(), nullable=True),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("edited", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("base_version", sa.Integer(), nullable=False),
        sa.Column("plan", sa.JSON(), nullable=False),
        sa.Column("receipt", sa.JSON(), nullable=True),
        sa.Column("tokens_before", sa.Integer(), nullable=False),
        sa.Column("tokens_after", sa.Integer(), nullable=False),
        sa.Column("model", sa.String(length=128), nullable=True),
        sa.Column("input_tokens", sa.Integer(), nullable=True),
        sa.Column("output_tokens", sa.Integer(), nullable=True),
        sa.Column("cost", sa.Float(), nullable=True),
        sa.Column("run_id", sa.BigInteger(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "status IN ('ready', 'applied', 'discarded', 'expired')",
            name="ck_compaction_draft_status",
        ),
    )
    op.create_index("ix_compaction_draft_session", "compaction_draft", ["session_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_compaction_draft_session", table_name="compaction_draft")
    op.drop_table("compaction_draft")
    # SQLite drops a column whose only check or reference is its own; PostgreSQL drops them
    # with it.
    for table, column in reversed(ADDED):
        op.execute(f"ALTER TABLE {table} DROP COLUMN {column.split()[0]}")
