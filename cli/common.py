"""What the subcommands share: the store and producers built from the settings, JSON output."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, TextIO

from sqlalchemy.engine import make_url

from producers.context import Producers
from service.settings import Settings
from store import Store, make_sessionmaker
from store.migrate import upgrade


def prepare_database(url: str) -> None:
    """The embedded SQLite default is created and migrated on first use; a server database is
    migrated by ``compaction migrate`` (the Procfile's release step)."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database:
        Path(parsed.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        upgrade(url)


def open_store(settings: Settings | None = None) -> Store:
    settings = settings or Settings()
    prepare_database(settings.database_url)
    return Store(make_sessionmaker(settings.database_url))


def open_producers(settings: Settings | None = None) -> Producers:
    settings = settings or Settings()
    prepare_database(settings.database_url)
    return Producers.from_settings(settings)


def print_json(data: Any, out: TextIO = sys.stdout) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False, default=str), file=out)
