"""Alembic environment: the URL is the configured one (``sqlalchemy.url`` set by
``store.migrate``) or ``COMPACTION_DATABASE_URL``; SQLite gets batch mode for ALTERs."""

from __future__ import annotations

import os

from alembic import context

from store.db import make_engine, normalize_url
from store.models import Base

DEFAULT_URL = "sqlite:///compaction.db"

config = context.config
url = config.get_main_option("sqlalchemy.url") or os.environ.get(
    "COMPACTION_DATABASE_URL", DEFAULT_URL
)


def run_migrations_offline() -> None:
    context.configure(
        url=normalize_url(url),
        target_metadata=Base.metadata,
        literal_binds=True,
        render_as_batch=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    given = config.attributes.get("connection")
    if given is not None:
        _run(given)
        return
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            _run(connection)
    finally:
        # Close at once: a SQLite file is complete (WAL checkpointed) when upgrade() returns,
        # and PostgreSQL keeps no idle connection of ours.
        engine.dispose()


def _run(connection: object) -> None:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,  # type: ignore[arg-type]
        render_as_batch=True,
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
