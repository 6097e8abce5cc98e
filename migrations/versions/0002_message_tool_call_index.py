"""index message (session_id, tool_call_id)

An append checks the tool-call ids it brings against the results the session stores
(docs/architecture.md, "Tables"): with this index that is a lookup of those ids, not a scan of
the session's rows.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01 16:10:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("message", schema=None) as batch_op:
        batch_op.create_index(
            "ix_message_session_tool_call", ["session_id", "tool_call_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("message", schema=None) as batch_op:
        batch_op.drop_index("ix_message_session_tool_call")
