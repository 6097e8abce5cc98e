"""The package a team installs (docs/architecture.md, "Layers"): the wheel holds one top-level
name, ``compaction``; an adopter's project with its own ``service.py``, ``gateway/``, ``cli/``
and ``migrations/`` beside it imports and migrates this project's code, never theirs; and Hermes
Agent (whose wheel installs top-level ``gateway`` and ``cli``) shares one virtualenv with it.

The wheel is built from a copy of the source tree (no build output lands in the checkout);
Hermes comes from the package registry, as ``benchmarks.versus`` installs it.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HERMES = "hermes-agent==0.19.0"
#: what a source copy leaves out: environments, caches, build output
SKIP = shutil.ignore_patterns(
    ".git", ".venv", ".ci-venv", ".bench", "build", "dist", "*.egg-info", "__pycache__",
    ".mypy_cache", ".ruff_cache", ".pytest_cache", "artifacts",
)  # fmt: skip


def run(*argv: str | Path, **options: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(a) for a in argv], capture_output=True, text=True, timeout=600, **options
    )  # type: ignore[call-overload]
    assert done.returncode == 0, f"{argv} failed:\n{done.stdout}\n{done.stderr}"
    return done  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = tmp_path_factory.mktemp("source") / "compaction"
    shutil.copytree(ROOT, source, symlinks=True, ignore=SKIP)
    out = tmp_path_factory.mktemp("wheel")
    pip = (sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps")
    run(*pip, "--no-build-isolation", "--wheel-dir", out, source)
    [built] = out.glob("compaction-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel alone in a folder (``pip --target``): the dependencies come from this test's
    environment, the package only from the wheel."""
    target = tmp_path_factory.mktemp("target")
    run(sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", target, wheel)
    return target


def test_the_wheel_installs_one_top_level_name(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    top = {n.split("/")[0] for n in names if ".dist-info/" not in n}
    assert top == {"compaction"}
    # What the layers need at run time ships too: the console, the migrations, the demo data.
    for needed in (
        "compaction/gateway/static/index.html",
        "compaction/migrations/versions/0001_initial_schema.py",
        "compaction/migrations/script.py.mako",
        "compaction/cli/demo_data/README.md",
        "compaction/py.typed",
        "compaction/testing.py",
    ):
        assert needed in names


def adopters_project(folder: Path) -> Path:
    """A gateway project whose own modules share the names the layers had before 0.2.0; any of
    them imported (or their Alembic env run) leaves a marker file."""
    marker = folder / "imported.txt"
    trap = f"open({str(marker)!r}, 'a').write(__name__ + '\\n')\n"
    for module in ("service.py", "store.py", "worker.py", "producers.py"):
        (folder / module).write_text(trap)
    for package in ("gateway", "cli", "migrations"):
        (folder / package).mkdir()
        (folder / package / "__init__.py").write_text(trap)
    (folder / "migrations" / "env.py").write_text(trap)
    return marker


def test_an_adopters_project_beside_it_imports_and_migrates(
    installed: Path, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    marker = adopters_project(project)
    database = tmp_path / "adopter.db"
    env = {
        **os.environ,
        "PYTHONPATH": f"{project}{os.pathsep}{installed}",  # their project first, as in a container
        "COMPACTION_DATABASE_URL": f"sqlite:///{database}",
    }
    code = (
        "import compaction, compaction.producers, compaction.gateway.app, compaction.cli; "
        "print(compaction.__file__)"
    )
    shown = run(sys.executable, "-c", code, cwd=project, env=env)
    assert shown.stdout.strip() == str(installed / "compaction" / "__init__.py")

    run(installed / "bin" / "compaction", "migrate", cwd=project, env=env)

    assert not marker.exists(), marker.read_text()
    with sqlite3.connect(database) as connection:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
    assert {"alembic_version", "chat_session", "message", "compaction_run"} <= tables


def test_hermes_agent_and_compaction_share_one_virtualenv(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", venv)
    python = venv / "bin" / "python"
    run(python, "-m", "pip", "install", "--quiet", wheel, HERMES)
    code = (
        "import compaction, compaction.gateway.app, compaction.cli, compaction.producers\n"
        "import gateway, cli, agent.context_compressor\n"
        "print(compaction.gateway.app.__file__)\n"
        "print(gateway.__file__)\n"
        "print(cli.__file__)\n"
    )
    ours, theirs, their_cli = run(python, "-c", code, cwd=tmp_path).stdout.split()
    site = venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    assert ours == str(site / "site-packages" / "compaction" / "gateway" / "app.py")
    assert theirs == str(site / "site-packages" / "gateway" / "__init__.py")
    assert their_cli == str(site / "site-packages" / "cli.py")
    run(venv / "bin" / "compaction", "--help", cwd=tmp_path)
