"""What the subcommands share: the store and producers built from the settings, JSON output,
the one-line error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TextIO

from sqlalchemy.engine import make_url

from compaction.producers.context import Producers
from compaction.service.settings import Settings
from compaction.store import Store, make_sessionmaker
from compaction.store.migrate import upgrade

#: The command that fixes a failure whose fix is a setting. The service's messages name no
#: fix (the console points at its Settings for the same codes): the command line adds its own.
FIXES: dict[str, str] = {
    "no_auxiliary_model": (
        "add one: compaction channel add NAME --provider P --model M --auxiliary --default, "
        "or compaction agent set AGENT --auxiliary-channel CHANNEL"
    ),
    "no_chat_model": "add one: compaction channel add NAME --provider P --model M",
}


def error_line(code: str, message: str) -> str:
    """``compaction: error [code]: message`` (docs/architecture.md, "Error codes"), on one line,
    with the command that fixes it when there is one."""
    fix = FIXES.get(code)
    text = f"{message} ({fix})" if fix else message
    return f"compaction: error [{code}]: {' '.join(text.split())}"


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


def print_json(data: Any, out: TextIO | None = None) -> None:
    """``out=None`` is ``print``'s own default: ``sys.stdout`` as it is when called (the commands
    default to it too, so a caller that redirects ``sys.stdout`` gets their output)."""
    print(json.dumps(data, indent=2, ensure_ascii=False, default=str), file=out)
