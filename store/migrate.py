"""Apply the Alembic migrations (``compaction migrate``, and the tests' setup)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

from compaction import migrations
from compaction.store.db import normalize_url

# The migrations ship inside the distribution (a package), so `compaction migrate` works from
# an installed wheel as well as from a checkout.
SCRIPTS = Path(migrations.__file__).resolve().parent


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(SCRIPTS))
    # ConfigParser interpolation: a literal % in a password must be doubled.
    config.set_main_option("sqlalchemy.url", normalize_url(url).replace("%", "%%"))
    return config


def upgrade(url: str, revision: str = "head") -> None:
    command.upgrade(alembic_config(url), revision)
