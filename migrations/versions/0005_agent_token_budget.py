"""agent.token_budget: a fixed threshold in tokens per agent

An agent's ``token_budget`` set, its sessions compact at that many tokens (capped at the window)
instead of a percentage of the window; blank, ``COMPACTION_TOKEN_BUDGET`` applies, and with
that unset the percentage (docs/architecture.md, "Settings"). A nullable column: existing
agents keep their behaviour.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01 19:30:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # The check inline with the column: SQLite adds it without copying the table (a copy would
    # run chat_session.agent_id's ON DELETE SET NULL; see 0003), PostgreSQL takes the same text.
    op.execute(
        "ALTER TABLE agent ADD COLUMN token_budget INTEGER "
        "CONSTRAINT ck_agent_token_budget CHECK (token_budget >= 1000)"
    )


def downgrade() -> None:
    # SQLite drops a column whose only check is its own; PostgreSQL drops the check with it.
    op.execute("ALTER TABLE agent DROP COLUMN token_budget")
