"""The end-to-end modules' shared fixtures: each module sets its own ``settings`` (module-scoped,
the ``COMPACTION_`` variables), these build the worker process and the in-process command line
on them."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.test_cli import Cli, in_process, worker_process


@pytest.fixture(scope="module")
def worker(
    settings: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[subprocess.Popen[bytes]]:
    with worker_process(settings, tmp_path_factory.mktemp("worker")) as process:
        yield process


@pytest.fixture
def cli(
    settings: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    keep_logging: None,
) -> Cli:
    return in_process(settings, monkeypatch, capsys, tmp_path)
