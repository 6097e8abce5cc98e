"""agent threshold and protected head nullable: unset means the system setting

An agent's ``compaction_threshold_percent`` and ``compaction_protect_first_n`` left blank take
``COMPACTION_THRESHOLD_PERCENT`` and ``COMPACTION_PROTECT_FIRST_N`` (docs/architecture.md,
"Settings"). Existing values are kept; the CHECK constraints still bound a value that is set.
The downgrade writes the old defaults (70, 3) where a value is blank.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-02 10:00:00.000000
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: column, the default it had before this revision
COLUMNS = (("compaction_threshold_percent", "70"), ("compaction_protect_first_n", "3"))


def upgrade() -> None:
    with _sessions_keep_their_agents(), op.batch_alter_table("agent", schema=None) as batch_op:
        for column, default in COLUMNS:
            batch_op.alter_column(
                column,
                existing_type=sa.Integer(),
                existing_server_default=default,
                server_default=None,
                nullable=True,
            )


def downgrade() -> None:
    for column, default in COLUMNS:
        op.execute(f"UPDATE agent SET {column} = {default} WHERE {column} IS NULL")
    with _sessions_keep_their_agents(), op.batch_alter_table("agent", schema=None) as batch_op:
        for column, default in COLUMNS:
            batch_op.alter_column(
                column, existing_type=sa.Integer(), server_default=default, nullable=False
            )


@contextmanager
def _sessions_keep_their_agents() -> Iterator[None]:
    """SQLite alters a column by copying the table and dropping the old one; with foreign keys
    on (they are, and the pragma cannot change inside the migration's transaction) that drop
    runs ``chat_session.agent_id``'s ON DELETE SET NULL. The links are saved and put back."""
    if op.get_bind().dialect.name != "sqlite":
        yield
        return
    op.execute(
        "CREATE TEMP TABLE _session_agent AS "
        "SELECT id, agent_id FROM chat_session WHERE agent_id IS NOT NULL"
    )
    yield
    op.execute(
        "UPDATE chat_session SET agent_id = "
        "(SELECT l.agent_id FROM _session_agent l WHERE l.id = chat_session.id) "
        "WHERE id IN (SELECT id FROM _session_agent)"
    )
    op.execute("DROP TABLE _session_agent")
