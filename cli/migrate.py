"""``compaction migrate``: apply the Alembic migrations to ``COMPACTION_DATABASE_URL``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TextIO

from sqlalchemy.engine import make_url

from compaction.service.settings import Settings
from compaction.store.migrate import upgrade


def register(commands: Any) -> None:
    parser = commands.add_parser("migrate", help="create or upgrade the database schema")
    parser.add_argument("--revision", default="head", help="target revision (default: head)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    url = Settings().database_url
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database:
        Path(parsed.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    upgrade(url, args.revision)
    print(f"migrated {parsed.render_as_string(hide_password=True)} to {args.revision}", file=out)
    return 0
