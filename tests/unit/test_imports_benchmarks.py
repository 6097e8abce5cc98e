"""The suite never imports the benchmarks: the benchmarks import the suite's harness
(``tests/namespace.py``, ``tests/processes.py``, ``tests/llm_server.py``), and the benchmarks'
own checks live in ``benchmarks/tests/``. A test that needs a benchmark belongs there."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent


def imported(tree: ast.Module) -> list[str]:
    """Every module name an ``import`` or ``from ... import`` of ``tree`` names."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


def test_no_test_imports_benchmarks() -> None:
    offenders = [
        f"{path.relative_to(TESTS.parent)}: {name}"
        for path in sorted(TESTS.rglob("*.py"))
        for name in imported(ast.parse(path.read_text(encoding="utf-8")))
        if name == "benchmarks" or name.startswith("benchmarks.")
    ]
    assert offenders == []


def test_both_forms_of_import_are_found() -> None:
    found = imported(ast.parse("import benchmarks.engine\nfrom benchmarks import fidelity\n"))
    assert found == ["benchmarks.engine", "benchmarks"]
