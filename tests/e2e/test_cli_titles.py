"""Session titles through the command line (issue 23): ``compaction import`` names a new
session after its file (``--title`` overrides; one appended to keeps its name), ``compaction
session rename ID TITLE`` renames it, ``""`` clears it; a bad title or a missing session is one
line with its code, nothing changed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from compaction.store import Store, make_sessionmaker
from tests.e2e.test_cli import Cli, environment


@pytest.fixture(scope="module")
def settings() -> Iterator[dict[str, str]]:
    with environment() as values:
        yield values


def titles(settings: dict[str, str]) -> dict[str, str | None]:
    store = Store(make_sessionmaker(settings["COMPACTION_DATABASE_URL"]))
    return {s.id: s.title for s in store.list_sessions()}


def transcript(folder: Path, name: str) -> Path:
    path = folder / name
    path.write_text(json.dumps([{"role": "user", "content": "hi"}]), encoding="utf-8")
    return path


def test_import_names_and_rename_renames(
    cli: Cli, settings: dict[str, str], tmp_path: Path
) -> None:
    first = cli("import", str(transcript(tmp_path, "orders migration.json"))).stdout.strip()
    named = cli(
        "import", str(transcript(tmp_path, "b.json")), "--title", "客服 #52", "--session", "s2"
    )
    assert named.stdout.strip() == "s2"
    cli("import", str(transcript(tmp_path, "more.json")), "--session", "s2")  # keeps its name
    assert titles(settings) == {first: "orders migration", "s2": "客服 #52"}

    renamed = cli("session", "rename", first, "MySQL → PostgreSQL")
    assert "MySQL → PostgreSQL" in renamed.stdout
    cli("session", "rename", "s2", "")
    assert titles(settings) == {first: "MySQL → PostgreSQL", "s2": None}


def test_a_bad_rename_is_one_line_and_changes_nothing(
    cli: Cli, settings: dict[str, str], tmp_path: Path
) -> None:
    cli("import", str(transcript(tmp_path, "kept.json")), "--session", "kept")
    refused = cli("session", "rename", "kept", "x" * 129, ok=False)
    assert refused.returncode == 1
    assert refused.stderr.strip().startswith("compaction: error [invalid_request]: title:")
    assert len(refused.stderr.strip().splitlines()) == 1
    missing = cli("session", "rename", "nobody", "x", ok=False)
    assert "[session_not_found]" in missing.stderr
    assert titles(settings)["kept"] == "kept"
