"""``compaction-conformance-kit`` (PyPI, MIT) run offline on our compaction (issue 24).

    python -m benchmarks.conformance [--seeds 1 2 3 4] [--rounds 5] [--budget 0.2] [--hermes]

The kit plants typed canaries (safety rules, hard constraints, facts, goal states, user
preferences) as user turns of randomized sessions (``compaction_kit.corpus``), compacts each
session again and again (round k+1 compacts round k's output) under a fixed character budget
(a fraction of the original transcript) and checks which canaries' required tokens survive.
Ours is ``compact_staged(..., reason="manual")`` (what the worker runs for ``/compact``) with
the extractive ``OfflineSummarizer``: no model. ``--hermes`` puts Hermes Agent's own fallback
beside it (``benchmarks/hermes.py``): the summary its compressor writes when the LLM fails.

The kits are never dependencies of the project: they are installed into a throwaway
virtualenv (``.bench/kits-venv``, ignored by git) on first use, appended to ``sys.path`` after
ours, as ``benchmarks/hermes.py`` does for Hermes.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks import hermes
from benchmarks.hermes import BENCH, site_packages
from compaction import CompactionConfig, Message, NothingToCompact, compact_staged
from compaction.core.offline import OfflineSummarizer

KITS = ("compaction-conformance-kit==0.8.0", "compactbench==0.1.0")
VENV = BENCH / "kits-venv"
#: the kit's canary types, in its order
#: what the engine's summary marker and footer take, about (tokens)
MARKER_TOKENS = 60
#: the most runs of one round, each with a smaller summary budget, to fit the kit's budget
FITS = 8
TYPES = ("safety_rule", "hard_constraint", "fact", "goal_state", "user_preference")


def ensure_kits(venv: Path = VENV) -> None:
    """Install the kits on first use (a throwaway virtualenv) and make them importable."""
    packages = site_packages(venv)
    if not (packages / "compaction_kit").is_dir() or not (packages / "compactbench").is_dir():
        print(f"installing {' '.join(KITS)} into {venv} (first run only)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", *KITS]
        subprocess.run(pip, check=True)
    if str(packages) not in sys.path:
        sys.path.append(str(packages))


def kits_importable() -> bool:
    """Whether the kits are installed already (the tests skip without them)."""
    packages = site_packages(VENV)
    return (packages / "compaction_kit").is_dir() and (packages / "compactbench").is_dir()


def to_messages(turns: Sequence[tuple[str, str]]) -> list[Message]:
    """The kit's turns as stored messages, numbered as the store numbers them."""
    return [Message(role=role, content=text, id=i) for i, (role, text) in enumerate(turns, 1)]  # type: ignore[arg-type]


def config_for(
    messages: Sequence[Message], budget_chars: int | None, less: int = 0
) -> CompactionConfig:
    """``/compact`` with the first (system) message protected and the smallest tail the engine
    allows; the kit's character budget (about 4 characters a token), less the protected
    message, the engine's marker and ``less`` tokens, goes to the summary (no user-words
    section and no ledger: the offline summary's rule lines are the selective copy)."""
    size = sum(len(m.content) for m in messages) // 4
    if budget_chars is None:
        return CompactionConfig(context_window=max(1_000, size // 2), protect_first_n=1)
    left = max(4, (budget_chars - len(messages[0].content)) // 4 - MARKER_TOKENS - less)
    return CompactionConfig(
        context_window=max(1_000, size // 2),
        protect_first_n=1,
        min_tail_messages=1,
        tail_token_budget_ratio=0.01,
        summary_min_tokens=left,
        summary_max_tokens=left,
        user_words_max_tokens=0,
        ledger_max_tokens=0,
    )


def ours(messages: list[Message], budget_chars: int | None) -> str:
    """The context after ``/compact``, as the model would read it (one line a message); an
    already-compacted context (nothing left to summarize) comes back unchanged. Over the
    kit's budget, the summary's budget is cut by the excess and the run repeated (at most
    ``FITS`` times): what the engine adds around the summary (marker, footer, tail) is not the
    summarizer's to know."""
    less = 0
    for _ in range(FITS):
        config = config_for(messages, budget_chars, less)
        try:
            staged = compact_staged(messages, config, OfflineSummarizer(), reason="manual")
        except NothingToCompact:
            return "\n".join(m.content for m in messages)
        text = "\n".join(f"[{m.role}] {m.content}" for m in staged.messages)
        if budget_chars is None or len(text) <= budget_chars:
            break
        less += (len(text) - budget_chars) // 4 + 8
    return text


class Ours:
    """The kit's ``Compactor``: round 1 compacts the session; later rounds get the previous
    output back as one system turn, which ``/compact`` protects (nothing new to summarize)."""

    name = "compaction (offline summarizer)"

    def compact(self, turns: list[Any], round_num: int = 1, budget_chars: int | None = None) -> Any:
        from compaction_kit import CompactedContext  # type: ignore[import-not-found,unused-ignore]

        messages = to_messages([(t.role, t.text) for t in turns])
        return CompactedContext(ours(messages, budget_chars), self.name, round_num)


def _unavailable(**_: Any) -> Any:
    """Replaces Hermes's ``call_llm``: the auxiliary model cannot be reached."""
    raise RuntimeError("summary model failed (benchmark: Hermes's deterministic fallback)")


def hermes_compress(messages: list[dict[str, str]]) -> list[dict[str, Any]]:
    """Hermes Agent 0.19.0's ``compress`` with its LLM failing: its deterministic fallback
    summary replaces the middle; one protected head message, as ours, its default tail."""
    module = hermes.load(hermes.DEFAULT_VENV)
    module.call_llm = _unavailable  # type: ignore[attr-defined]
    size = sum(len(m["content"]) for m in messages) // 4
    compressor = module.ContextCompressor(
        model="benchmark",
        threshold_percent=0.5,
        protect_first_n=1,
        protect_last_n=2,
        config_context_length=max(1_000, size // 2),
        quiet_mode=True,
    )
    result: list[dict[str, Any]] = compressor.compress(messages, force=True)
    return result


def as_text(messages: Sequence[dict[str, Any]]) -> str:
    return "\n".join(f"[{m.get('role')}] {m.get('content') or ''}" for m in messages)


class HermesFallback:
    """Hermes Agent's compressor with its LLM unavailable (``benchmarks/hermes.py`` installs
    it): the deterministic fallback summary it inserts then, the protected head and tail kept.
    Later rounds get the previous output as one system turn, as ours do."""

    name = f"hermes-agent {hermes.VERSION} (no-model fallback)"

    def compact(self, turns: list[Any], round_num: int = 1, budget_chars: int | None = None) -> Any:
        from compaction_kit import CompactedContext  # type: ignore[import-not-found,unused-ignore]

        messages = [{"role": t.role, "content": t.text} for t in turns]
        out = hermes_compress(messages) if len(messages) > 3 else messages
        return CompactedContext(as_text(out), self.name, round_num)


def run(
    factory: Callable[[], Any], seeds: Sequence[int], rounds: int, budget: float
) -> dict[str, Any]:
    """Final-round survival per canary type (kept/planted over the seeds) and budget compliance."""
    from compaction_kit import build_random_session, run_conformance  # type: ignore[import-not-found,unused-ignore]

    kept = dict.fromkeys(TYPES, 0)
    planted = dict.fromkeys(TYPES, 0)
    compliant, ratios = True, []
    for seed in seeds:
        session, canaries = build_random_session(seed)
        result = run_conformance(
            session, factory(), rounds=rounds, canaries=canaries, budget_fraction=budget
        )
        final = result.rounds[-1]
        for canary in canaries:
            planted[canary.type.value] += 1
            kept[canary.type.value] += int(final.survived[canary.id])
        compliant &= all(r.within_budget for r in result.rounds)
        ratios.append(final.output_chars / (final.budget_chars or 1) * budget)
    return {"kept": kept, "planted": planted, "compliant": compliant, "ratio": ratios}


def table(results: dict[str, dict[str, Any]]) -> list[str]:
    """Markdown: canary type x compactor, kept/planted and the share."""
    names = list(results)
    lines = ["| canary type | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    for kind in (*TYPES, "all"):
        cells = []
        for name in names:
            r = results[name]
            k = sum(r["kept"].values()) if kind == "all" else r["kept"][kind]
            n = sum(r["planted"].values()) if kind == "all" else r["planted"][kind]
            cells.append(f"{k}/{n} ({k / n:.0%})")
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    within = " | ".join(
        f"{'yes' if r['compliant'] else 'NO'}, final {statistics.mean(r['ratio']):.1%}"
        for r in results.values()
    )
    lines.append(f"| within budget | {within} |")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.conformance")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--budget", type=float, default=0.20)
    parser.add_argument("--hermes", action="store_true", help="Hermes's no-model fallback too")
    args = parser.parse_args(argv)
    ensure_kits()
    factories: dict[str, Callable[[], Any]] = {Ours.name: Ours}
    if args.hermes:
        factories[HermesFallback.name] = HermesFallback
    results = {name: run(f, args.seeds, args.rounds, args.budget) for name, f in factories.items()}
    print("$ python -m benchmarks.conformance " + " ".join(argv or sys.argv[1:]))
    print(
        f"randomized sessions, seeds {args.seeds}, {args.rounds} rounds, budget {args.budget:.0%}"
    )
    print("\n".join(table(results)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
