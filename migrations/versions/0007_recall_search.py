"""Step 15: recall's full-text search over a session's compacted originals
(docs/architecture.md, "Recall"; ``compaction.store.recall``).

- PostgreSQL: ``message.content_tsv``, a stored generated column
  ``to_tsvector('simple', content)`` (``simple``: no stemming, code words and names are kept as
  written; stored, so that ranking a match does not parse its text again), with a GIN index.
  Adding it rewrites the table once.
- SQLite: the FTS5 table ``message_fts`` (external content: the words of ``message.content``,
  no second copy of the text), filled from the existing rows and kept in sync by triggers. A
  SQLite built without FTS5 gets nothing: recall falls back to ``LIKE`` there.

Neither object is in the models: ``migrations/env.py`` leaves them out of autogenerate's
comparison (``alembic check``).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-03 14:20:00.000000
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

PG_INDEX = "ix_message_content_fts"
PG_COLUMN = "content_tsv"
FTS = "message_fts"
_SQLITE_CREATE = (
    f"CREATE VIRTUAL TABLE {FTS} USING fts5(content, content='message', content_rowid='id')",
    f"INSERT INTO {FTS}(rowid, content) SELECT id, content FROM message",
    f"CREATE TRIGGER {FTS}_ai AFTER INSERT ON message BEGIN "
    f"INSERT INTO {FTS}(rowid, content) VALUES (new.id, new.content); END",
    f"CREATE TRIGGER {FTS}_ad AFTER DELETE ON message BEGIN "
    f"INSERT INTO {FTS}({FTS}, rowid, content) VALUES ('delete', old.id, old.content); END",
    f"CREATE TRIGGER {FTS}_au AFTER UPDATE OF content ON message BEGIN "
    f"INSERT INTO {FTS}({FTS}, rowid, content) VALUES ('delete', old.id, old.content); "
    f"INSERT INTO {FTS}(rowid, content) VALUES (new.id, new.content); END",
)


def _has_fts5() -> bool:
    try:
        with sqlite3.connect(":memory:") as probe:
            probe.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
        return True
    except sqlite3.OperationalError:
        return False


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        if _has_fts5():
            for statement in _SQLITE_CREATE:
                op.execute(statement)
        return
    op.execute(
        f"ALTER TABLE message ADD COLUMN {PG_COLUMN} tsvector "
        "GENERATED ALWAYS AS (to_tsvector('simple', content)) STORED"
    )
    op.execute(f"CREATE INDEX {PG_INDEX} ON message USING gin ({PG_COLUMN})")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for trigger in ("ai", "ad", "au"):
            op.execute(f"DROP TRIGGER IF EXISTS {FTS}_{trigger}")
        op.execute(f"DROP TABLE IF EXISTS {FTS}")
        return
    op.execute(f"DROP INDEX IF EXISTS {PG_INDEX}")
    op.execute(f"ALTER TABLE message DROP COLUMN IF EXISTS {PG_COLUMN}")
