"""Benchmark of the engine, ``compact_staged(..., reason="manual")`` (both stages, as the worker
runs them: docs/architecture.md, "The algorithm", "Two segments"), with an instant fake
summarizer (issues "1 of 5", "Step 11").

    python -m benchmarks.engine [--repeat N] [--skip-100k]

Prints, per shared transcript and per synthetic conversation (1k, 10k, 100k messages): the
stages that ran (``h`` history, ``l`` loop), milliseconds, messages per second, time per phase
(summed over the stages; ``rest`` is the time outside them), and the ratio time(100k) /
time(10k) (linear would be 10).
Figures are the best of ``--repeat`` runs; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from dataclasses import replace
from pathlib import Path

from compaction import CompactionConfig, Message, ToolCall, estimate_messages_tokens
from compaction.core.engine import CompactionResult, SummaryRequest
from compaction.core.loop import LoopResult
from compaction.core.messages import messages_from_dicts
from compaction.core.serialize import serialize
from compaction.core.staged import Staged, compact_staged

TRANSCRIPTS = Path(__file__).resolve().parent.parent / "tests" / "data" / "transcripts"
PHASES = ("estimate", "prune", "boundaries", "serialize", "ledger", "summarize", "assemble")


SUMMARY = "## Goal\n" + "Instant summary for the benchmark. " * 10


class InstantSummarizer:
    def summarize(self, request: SummaryRequest) -> str:
        return SUMMARY


def load_transcript(name: str) -> list[Message]:
    raw = json.loads((TRANSCRIPTS / f"{name}.json").read_text(encoding="utf-8"))
    return [replace(m, id=i) for i, m in enumerate(messages_from_dicts(raw), start=1)]


def window_for(messages: list[Message]) -> int:
    """The transcript tests' window: each transcript well over its threshold, yet above its
    system prompt."""
    system = estimate_messages_tokens(m for m in messages if m.role == "system")
    return max(estimate_messages_tokens(messages) // 2, system * 100 // 70 + 50, 1_000)


def transcript(path: Path) -> tuple[list[Message], CompactionConfig]:
    messages = load_transcript(path.stem)
    return messages, CompactionConfig(context_window=window_for(messages), protect_first_n=1)


def synthetic(count: int) -> list[Message]:
    """An agent loop: user asks, the assistant runs a command, the tool answers with a listing
    that holds paths, ids and now and then an error.

    Numbers have a fixed width (and ids a letter), so every size has the same mix per message:
    with ``{turn:x}`` the first 256 turns had ids too short to count as ids, and the 100k
    conversation carried 35% more ledger items per message than the 10k one."""
    out = [Message(role="system", content="You are a coding agent.", id=1)]
    turn = 0
    while len(out) < count:
        call = ToolCall(
            id=f"call_{turn:06d}",
            name="bash",
            arguments=json.dumps({"command": f"pytest tests/test_mod_{turn % 97}.py -x"}),
        )
        listing = "\n".join(f"src/pkg_{turn % 13}/mod_{k}.py  {turn:05x}f{k:02x}" for k in range(8))
        error = f"\nE   ValueError: bad value {turn:06d}" if turn % 5 == 0 else ""
        out += [
            Message(role="user", content=f"Fix the failure in module {turn % 97}, please."),
            Message(role="assistant", content="Running the tests.", tool_calls=[call]),
            Message(
                role="tool", content=listing + error + "\n" + "log line " * 40, tool_call_id=call.id
            ),
            Message(role="assistant", content=f"Module {turn % 97} passes now."),
        ]
        turn += 1
    return [replace(m, id=i) for i, m in enumerate(out[:count], start=1)]


def best_run(
    messages: list[Message], config: CompactionConfig, repeat: int
) -> tuple[float, Staged]:
    best, result = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        run = compact_staged(messages, config, InstantSummarizer(), reason="manual")
        seconds = time.perf_counter() - started
        if seconds < best:  # the phase columns are those of the best run
            best, result = seconds, run
    assert result is not None
    return best, result


def one_pass(messages: list[Message], repeat: int) -> float:
    """Best time of the simplest linear pass the engine makes (serializing every message): its
    100k/10k ratio is what linear work costs on this machine at these sizes (caches)."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        serialize(messages, 4000, 1500)
        best = min(best, time.perf_counter() - started)
    return best


def stages(result: Staged) -> list[CompactionResult]:
    return [stage for stage in (result.history, result.loop) if stage is not None]


def row(name: str, count: int, seconds: float, result: Staged) -> str:
    ran = stages(result)
    kinds = "+".join("l" if isinstance(stage, LoopResult) else "h" for stage in ran)
    spent = [sum(stage.timings.get(p, 0.0) for stage in ran) for p in PHASES]
    # The rest: choosing the stages (``first_stage``, ``loop_follows``) and each stage's work
    # after its last phase (its result's figures).
    phases = " ".join(f"{t * 1000:7.1f}" for t in [*spent, seconds - sum(spent)])
    return (
        f"{name:38} {kinds:>3} {count:7d} {seconds * 1000:9.1f} {count / seconds:9.0f} "
        f"{result.tokens_before:9d} {result.tokens_after:8d} {phases}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--skip-100k", action="store_true")
    args = parser.parse_args(argv)
    print(f"$ python -m benchmarks.engine {' '.join(argv or sys.argv[1:])}".rstrip())
    print(f"python {platform.python_version()} on {platform.machine()}, best of {args.repeat}")
    header = " ".join(f"{p[:7]:>7}" for p in [*PHASES, "rest"])
    print(
        f"{'conversation':38} {'ran':>3} {'msgs':>7} {'ms':>9} {'msgs/s':>9} {'tok in':>9} "
        f"{'tok out':>8} {header}  (phase ms)"
    )
    total_messages, total_seconds = 0, 0.0
    for path in sorted(TRANSCRIPTS.glob("*.json")):
        messages, config = transcript(path)
        seconds, result = best_run(messages, config, args.repeat)
        total_messages += len(messages)
        total_seconds += seconds
        print(row(path.stem, len(messages), seconds, result))
    print(
        f"{'ALL SHARED TRANSCRIPTS':38} {'':3} {total_messages:7d} {total_seconds * 1000:9.1f} "
        f"{total_messages / total_seconds:9.0f}   (goal: >= 17,000 msgs/s)"
    )
    times: dict[int, float] = {}
    floors: dict[int, float] = {}
    sizes = (1_000, 10_000) if args.skip_100k else (1_000, 10_000, 100_000)
    for size in sizes:
        messages = synthetic(size)
        # The same number of runs at every size: a best of five against a single run would
        # tilt the ratio.
        seconds, result = best_run(messages, CompactionConfig(), args.repeat)
        times[size] = seconds
        floors[size] = one_pass(messages, args.repeat)
        chunks = sum(stage.chunks for stage in stages(result))
        print(row(f"synthetic {size:,} ({chunks} chunks)", size, seconds, result))
    if 100_000 in times:
        print(
            f"time(100k) / time(10k) = {times[100_000] / times[10_000]:.1f}   "
            "(goal: <= 12; linear is 10)"
        )
        reference = floors[100_000] / floors[10_000]
        print(
            f"reference: one serialize pass over the same messages, 100k / 10k = "
            f"{reference:.1f}   (linear work on this machine)"
        )
        print(
            f"engine ratio / reference ratio = {times[100_000] / times[10_000] / reference:.2f}"
            "   (1.00: as linear as one pass over the messages)"
        )
    print_survival()
    return 0


def print_survival() -> None:
    """The identifiers of each transcript's compacted span that survive verbatim, per kind
    (``python -m benchmarks.survival``; it imports this module, hence the late import)."""
    from benchmarks import survival

    print(
        "\nidentifier survival (the summarizer writes nothing useful: only the ledger keeps them)"
    )
    print("\n".join(survival.table(survival.rows())))


if __name__ == "__main__":
    raise SystemExit(main())
