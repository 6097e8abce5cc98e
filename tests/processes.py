"""Child processes, for the tests that run real processes and for the benchmarks (one home, in
``tests/``: the benchmarks import the suite's harness, never the other way round): the
environment a child gets (its settings and nothing of the caller's), starting one in a process
group of its own, stopping the whole group.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from contextlib import suppress
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
COMPACTION = Path(sys.executable).parent / "compaction"


def child_env(**settings: str) -> dict[str, str]:
    """This environment less its ``COMPACTION_`` variables, plus ``settings``: a child runs with
    the settings it is given, never the caller's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPACTION_")}
    env.update(settings)
    return env


def start(argv: list[str], env: dict[str, str], log: Path | None = None) -> subprocess.Popen[bytes]:
    """``argv`` in a process group of its own (a pool's children die with it), its output in
    ``log`` (or nowhere)."""
    with open(log or os.devnull, "wb") as out:
        return subprocess.Popen(
            argv,
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def stop(process: subprocess.Popen[Any], sig: int = signal.SIGTERM, timeout: float = 15.0) -> int:
    """Signal the process group; SIGKILL it when it outlives ``timeout``, then whatever of the
    group is left (a pool's children). Returns the process's exit status."""
    if process.poll() is None:
        _killpg(process.pid, sig)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            _killpg(process.pid, signal.SIGKILL)
            process.wait(10)
    _killpg(process.pid, signal.SIGKILL)
    return process.returncode


def _killpg(pgid: int, sig: int) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
