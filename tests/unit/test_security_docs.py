"""docs/security.md, the threat model: every test a line points at exists (a renamed or deleted
test would leave a defence with no proof)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "security.md"
#: `folder/test_file.py::test_name` or `::test_name` (same file as the reference before it)
REFERENCE = re.compile(r"`((?:[a-z0-9_]+/)*test_[a-z0-9_]+\.py)?(?:::(test_[a-z0-9_]+))?`")


def references() -> list[tuple[str, str | None]]:
    found: list[tuple[str, str | None]] = []
    current = ""
    for match in REFERENCE.finditer(DOC.read_text(encoding="utf-8")):
        path, name = match.groups()
        if path is None and name is None:
            continue
        current = path or current
        found.append((current, name))
    return found


def functions_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}


def test_every_test_the_threat_model_names_exists() -> None:
    named = references()
    assert len(named) >= 30
    missing = []
    for path, name in named:
        file = ROOT / "tests" / path
        if not file.is_file():
            missing.append(path)
        elif name is not None and name not in functions_of(file):
            missing.append(f"{path}::{name}")
    assert not missing, f"docs/security.md names tests that do not exist: {missing}"
