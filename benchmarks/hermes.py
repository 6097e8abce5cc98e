"""Hermes Agent v0.19.0's context compressor (the newest the registry serves), driven in this
process for ``benchmarks.versus``.

Hermes is never a dependency of the project: it is installed into a throwaway virtualenv
(``.bench/hermes-venv`` by default, ignored by git) on first use, and that virtualenv's
site-packages is appended to ``sys.path`` after ours, so the project's own packages (and its
``openai``, ``pydantic``) win any name both hold; Hermes's top-level ``gateway`` and ``cli``
are never imported by its compressor. ``HERMES_HOME`` points at ``.bench/hermes-home`` so no
user configuration under ``~/.hermes`` changes what it does.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

from benchmarks.engine import SUMMARY

VERSION = "0.19.0"
BENCH = Path(__file__).resolve().parent.parent / ".bench"
DEFAULT_VENV = BENCH / "hermes-venv"
# With --no-deps: what agent.context_compressor needs at import beyond the standard library
# (yaml and requests for agent.model_metadata; openai and httpx for agent.auxiliary_client).
COMPRESSOR_IMPORTS = ("pyyaml", "requests", "openai", "httpx")


def site_packages(venv: Path) -> Path:
    """The virtualenv's site-packages; it is built by this interpreter, so same version."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return venv / "lib" / version / "site-packages"


def installed(venv: Path) -> bool:
    return (site_packages(venv) / f"hermes_agent-{VERSION}.dist-info").is_dir()


def install(venv: Path) -> None:
    """Create the virtualenv and install Hermes; if its full dependency set fails, Hermes alone
    plus only what its compressor module imports."""
    print(f"installing hermes-agent=={VERSION} into {venv} (first run only)", flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    full = subprocess.run([*pip, f"hermes-agent=={VERSION}"], check=False)
    if full.returncode != 0:
        print("full install failed: --no-deps plus the compressor's imports", flush=True)
        subprocess.run([*pip, "--no-deps", f"hermes-agent=={VERSION}"], check=True)
        subprocess.run([*pip, *COMPRESSOR_IMPORTS], check=True)


def completion(text: str) -> SimpleNamespace:
    """A chat completion as Hermes reads it: ``response.choices[0].message.content``."""
    message = SimpleNamespace(role="assistant", content=text)
    return SimpleNamespace(choices=[SimpleNamespace(index=0, message=message)])


def instant_llm(**_: Any) -> SimpleNamespace:
    """Replaces Hermes's ``call_llm``: the benchmark's fixed summary at once, no network."""
    return completion(SUMMARY)


def load(venv: Path) -> ModuleType:
    """``agent.context_compressor`` from the virtualenv (installed first if missing), its LLM
    call replaced by ``instant_llm``."""
    if not installed(venv):
        install(venv)
    home = BENCH / "hermes-home"
    home.mkdir(parents=True, exist_ok=True)
    os.environ["HERMES_HOME"] = str(home)
    path = str(site_packages(venv))
    if path not in sys.path:
        sys.path.append(path)
    module = importlib.import_module("agent.context_compressor")
    # The compressor imported the name into its own namespace: patch it there.
    module.call_llm = instant_llm  # type: ignore[attr-defined]
    return module


def compressor(module: ModuleType, context_window: int, threshold_percent: int) -> Any:
    """A fresh ``ContextCompressor`` as the agent builds one (``agent/agent_init.py``), with
    its defaults but for the window and threshold; ``config_context_length`` is the
    user's ``model.context_length`` override, which skips its model-window lookups."""
    return module.ContextCompressor(
        model="benchmark",
        threshold_percent=threshold_percent / 100,
        config_context_length=context_window,
        quiet_mode=True,
    )


def record_middles(compressor: Any) -> list[int]:
    """The number of turns each of the compressor's summary calls is given, appended to the
    list returned: a pass-through around its ``_generate_summary``, so that the report can say
    how much each side summarized."""
    sizes: list[int] = []
    generate = compressor._generate_summary

    # 0.19.0 added ``memory_context`` (and may add more): every keyword passes through.
    def recorded(turns: list[dict[str, Any]], **keywords: Any) -> str | None:
        sizes.append(len(turns))
        result: str | None = generate(turns, **keywords)
        return result

    compressor._generate_summary = recorded
    return sizes
