"""Alembic environment: the URL is the configured one (``sqlalchemy.url`` set by
``compaction.store.migrate``) or the service's setting (``COMPACTION_DATABASE_URL``, else its
default: one home for the default, ``compaction.service.settings``); SQLite gets batch mode for
ALTERs."""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

from compaction.service.settings import Settings
from compaction.store.db import make_engine, normalize_url
from compaction.store.models import Base
from compaction.store.recall import include_object

config = context.config
url = config.get_main_option("sqlalchemy.url") or Settings().database_url


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


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=True,
        compare_type=True,
        include_object=include_object,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
