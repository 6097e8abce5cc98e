"""Our engine against Hermes Agent v0.19.0's context compressor, side by side in one process
(issue "Step 11", "Speed, measured side by side in one run"; anchor moved to 0.19.0 by
issue 24).

    python -m benchmarks.versus [--repeat N] [--hermes-venv PATH]

Hermes is installed on first run into a throwaway virtualenv (``benchmarks/hermes.py``), never
into the project. Both sides get the same conversations (every shared transcript, then the
synthetic 1,000 and 10,000-message ones of ``benchmarks.engine``, then the agent shapes of
``benchmarks.shapes``, rows named ``synthetic shape …``), the same messages (Hermes's
as OpenAI chat dicts from ``compaction.core.formats.to_openai``, converted outside the timing) and
the same summary text (``benchmarks.engine.SUMMARY``), returned at once: ours through
``benchmarks.engine.InstantSummarizer``, Hermes's by replacing the ``call_llm`` its compressor
imported (``agent.context_compressor.call_llm``), so neither side touches the network.

Both trigger at 64,000 tokens:

- ours: ``CompactionConfig(context_window=128_000, threshold_percent=50)``, the rest at its
  defaults (tail budget 20% of the threshold = 12,800 tokens, ``protect_first_n`` 3);
- Hermes: ``ContextCompressor(config_context_length=128_000, threshold_percent=0.50)`` (its
  ``model.context_length`` override; no model lookup), the rest at its defaults (tail budget
  20% of the threshold = 12,800 tokens, 3 head messages after the system prompt, at least the
  last 20 messages).

Most transcripts are under 64,000 tokens, so both sides are forced, as their manual command
does: ours is ``compact_staged(..., reason="manual")``, what the worker runs for ``/compact``
(the history stage, then the loop stage if still at or over the threshold, or the loop alone
when the history has nothing: the mini-swe-agent runs are one request); Hermes's is
``ContextCompressor.compress(messages, force=True)``, what its ``/compress`` and its automatic
path call (``agent/conversation_compression.py``). ``compress`` never checks the threshold
itself (the agent asks ``should_compress`` first), so it compacts any conversation with a
middle. The ``auto`` column says whether each side's automatic check would fire at this size
(ours: our estimate against ``threshold_tokens``; Hermes: ``should_compress`` on its rough
estimate). A side that compacts nothing is named in the note and the row has no ratio; the
``out`` and ``tok after`` columns (both measured with our estimator) show how much each did.

Each conversation runs ``--repeat`` rounds alternating ours, Hermes, ours, Hermes...; each
Hermes run gets a fresh compressor (it keeps state between calls: the previous summary,
anti-thrashing counts), built outside the timing like our config. Figures are the best run per
side; ratio = Hermes time / ours (> 1: we are faster). Nothing is asserted.

The two do not leave the same tail: Hermes keeps every message after the latest user message
(its ``_ensure_last_user_message_in_tail``), so on a one-request agent it summarizes little or
nothing of the task's loop, where ours runs its loop stage. ``per tok`` is the same ratio with
each side's work counted: time per token freed (our estimate before, less our estimate of what
the side left), Hermes's over ours; a row where a side freed nothing has none. ``us/ktok`` and
``H us/kt`` are the two rates themselves: each side's microseconds per 1,000 tokens it freed.
"""

from __future__ import annotations

import argparse
import gc
import platform
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from benchmarks import hermes, shapes
from benchmarks.engine import TRANSCRIPTS, InstantSummarizer, load_transcript, synthetic
from compaction import CompactionConfig, Message, NothingToCompact, Staged, compact_staged
from compaction.core.formats import from_openai, to_openai
from compaction.core.tokens import estimate_messages_tokens

CONTEXT_WINDOW, THRESHOLD_PERCENT = 128_000, 50
SIZES = (1_000, 10_000)
SHAPE = "synthetic shape "
GOAL = "goal: >= 3x overall, no transcript slower than Hermes"


@dataclass(frozen=True, slots=True)
class Outcome:
    """One side's run: the messages it summarized, what it left (``None`` when it compacted
    nothing) and a note."""

    summarized: int
    messages_out: int | None
    tokens_after: int | None
    note: str


@dataclass(frozen=True, slots=True)
class Row:
    name: str
    messages: int
    tokens: int
    auto: str
    ours_s: float
    hermes_s: float
    ours: Outcome
    hermes: Outcome

    @property
    def compared(self) -> bool:
        return self.ours.messages_out is not None and self.hermes.messages_out is not None

    def freed(self, outcome: Outcome) -> int:
        """The tokens a side took out of the context (our estimate before, less after)."""
        return 0 if outcome.tokens_after is None else self.tokens - outcome.tokens_after

    @property
    def freed_compared(self) -> bool:
        """Both sides compacted and both freed tokens: the rate per token freed is defined."""
        return self.compared and min(self.freed(self.ours), self.freed(self.hermes)) > 0


def ratio(ours_s: float, hermes_s: float) -> float:
    """Hermes time / ours: above 1 we are faster."""
    return hermes_s / ours_s


def freed_ratio(rows: Sequence[Row]) -> float:
    """Hermes's time per token freed / ours, over ``rows`` (all ``freed_compared``): the time
    ratio with each side's work counted, where the two leave different tails."""
    ours = sum(r.ours_s for r in rows) / sum(r.freed(r.ours) for r in rows)
    theirs = sum(r.hermes_s for r in rows) / sum(r.freed(r.hermes) for r in rows)
    return theirs / ours


def rate(seconds: float, freed: int) -> str:
    """A side's time per 1,000 tokens freed, in microseconds (``-`` where it freed none)."""
    return f"{seconds * 1e9 / freed:8.1f}" if freed > 0 else f"{'-':>8}"


def rates(rows: Sequence[Row]) -> str:
    """Each side's own time per 1,000 tokens freed, summed over ``rows``: ours, then Hermes."""
    ours = sum(r.freed(r.ours) for r in rows)
    theirs = sum(r.freed(r.hermes) for r in rows)
    return (
        f"{rate(sum(r.ours_s for r in rows), ours)} {rate(sum(r.hermes_s for r in rows), theirs)}"
    )


def after(outcome: Outcome) -> str:
    if outcome.messages_out is None:
        return f"{'-':>5} {'-':>5} {'-':>7}"
    return f"{outcome.summarized:5d} {outcome.messages_out:5d} {outcome.tokens_after:7d}"


def work_note(ours: int, theirs: int) -> str:
    """A warning when one side summarized less than half of what the other did: the ratio
    then compares different work (still counted: each side chose its own middle)."""
    if min(ours, theirs) * 2 >= max(ours, theirs):
        return ""
    return f"NOT the same work: ours summarized {ours} messages, Hermes {theirs}"


def row_line(row: Row) -> str:
    shown = f"{ratio(row.ours_s, row.hermes_s):6.2f}x" if row.compared else f"{'n/a':>7}"
    per_token = f"{freed_ratio([row]):7.2f}x" if row.freed_compared else f"{'n/a':>8}"
    sides = (("ours", row.ours), ("Hermes", row.hermes))
    notes = [f"{side}: {o.note}" for side, o in sides if o.note]
    if row.compared and (differs := work_note(row.ours.summarized, row.hermes.summarized)):
        notes.append(differs)
    return (
        f"{row.name:34} {row.messages:6d} {row.tokens:7d} {row.auto:>5} | "
        f"{after(row.ours)} {after(row.hermes)} | {rates([row])} | "
        f"{row.ours_s * 1000:8.1f} {row.hermes_s * 1000:8.1f} {shown} {per_token}  "
        f"{'; '.join(notes)}"
    ).rstrip()


def total_line(label: str, rows: Sequence[Row]) -> str:
    """Sums over the rows both sides compacted; the rest are named, not counted."""
    both = [r for r in rows if r.compared]
    ours, theirs = sum(r.ours_s for r in both), sum(r.hermes_s for r in both)
    left_out = [r.name for r in rows if not r.compared]
    freeing = [r for r in both if r.freed_compared]
    per_token = f"{freed_ratio(freeing):7.2f}x" if freeing else f"{'n/a':>8}"
    line = (
        f"{label:34} {sum(r.messages for r in both):6d} "
        f"{'':>57} {rates(freeing) if freeing else ' ' * 17}   "
        f"{ours * 1000:8.1f} {theirs * 1000:8.1f} {ratio(ours, theirs):6.2f}x {per_token}"
    )
    notes = [f"not counted: {', '.join(left_out)}"] if left_out else []
    if unfreed := [r.name for r in both if not r.freed_compared]:
        notes.append(f"per token freed without: {', '.join(unfreed)}")
    return line + (f"  ({'; '.join(notes)})" if notes else "")


def verdict(rows: Sequence[Row]) -> str:
    both = [r for r in rows if r.compared]
    overall = ratio(sum(r.ours_s for r in both), sum(r.hermes_s for r in both))
    slower = [
        r.name
        + (" (not the same work)" if work_note(r.ours.summarized, r.hermes.summarized) else "")
        for r in both
        if r.hermes_s < r.ours_s
    ]
    return judged(GOAL, overall, slower)


def judged(label: str, overall: float, slower: Sequence[str]) -> str:
    """The goal's line: met when ``overall`` is at least 3x and no transcript is ``slower``."""
    met = overall >= 3 and not slower
    where = f"; slower than Hermes on: {', '.join(slower)}" if slower else ""
    return f"{label}: {'met' if met else 'NOT met'} (overall {overall:.2f}x{where})"


def freed_verdict(rows: Sequence[Row]) -> str:
    """The same goal per token freed: time / (tokens before - tokens after), each side's own."""
    freeing = [r for r in rows if r.freed_compared]
    if not freeing:
        return "per token freed: no transcript where both sides freed tokens"
    slower = [r.name for r in freeing if freed_ratio([r]) < 1]
    return judged("per token freed", freed_ratio(freeing), slower)


#: A side's run: it compacts, and returns how to describe what it did, which the timing leaves
#: out (our estimate of its output, and for Hermes converting that output back first).
Run = Callable[[], Callable[[], Outcome]]


def timed(run: Run) -> tuple[float, Outcome]:
    gc.collect()  # neither side pays for the other's garbage
    started = time.perf_counter()
    describe = run()
    seconds = time.perf_counter() - started
    return seconds, describe()


def ours_run(messages: Sequence[Message], config: CompactionConfig) -> Run:
    def run() -> Callable[[], Outcome]:
        try:
            staged = compact_staged(messages, config, InstantSummarizer(), reason="manual")
        except NothingToCompact:
            return lambda: Outcome(0, None, None, "nothing to compact")
        return lambda: ours_outcome(staged, config)

    return run


def ours_outcome(staged: Staged, config: CompactionConfig) -> Outcome:
    ran = [(s, r) for s, r in (("history", staged.history), ("loop", staged.loop)) if r]
    summarized = sum(r.middle[1] - r.middle[0] for _, r in ran)
    tokens = estimate_messages_tokens(staged.messages, config.estimator())
    return Outcome(summarized, len(staged.messages), tokens, "+".join(s for s, _ in ran))


def hermes_run(module: ModuleType, dicts: list[dict[str, Any]], config: CompactionConfig) -> Run:
    compressor = hermes.compressor(module, config.context_window, config.threshold_percent)
    middles = hermes.record_middles(compressor)

    def run() -> Callable[[], Outcome]:
        out = compressor.compress(dicts, force=True)
        return lambda: hermes_outcome(compressor, middles, out, config)

    return run


def hermes_outcome(
    compressor: Any, middles: list[int], out: list[dict[str, Any]], config: CompactionConfig
) -> Outcome:
    if compressor.compression_count == 0:
        return Outcome(0, None, None, "nothing to compress")
    fallback = compressor._last_summary_fallback_used  # our summary never reached it
    note = "its fallback summary, not ours" if fallback else ""
    tokens = estimate_messages_tokens(from_openai(out), config.estimator())
    return Outcome(sum(middles), len(out), tokens, note)


def auto_fires(
    module: ModuleType,
    messages: Sequence[Message],
    dicts: list[dict[str, Any]],
    config: CompactionConfig,
) -> str:
    """``y``/``n`` for ours, then Hermes: would the automatic check compact at this size."""
    ours = estimate_messages_tokens(messages, config.estimator()) >= config.threshold_tokens
    compressor = hermes.compressor(module, config.context_window, config.threshold_percent)
    theirs = compressor.should_compress(module.estimate_messages_tokens_rough(dicts))
    return f"{'y' if ours else 'n'}/{'y' if theirs else 'n'}"


def measure(
    name: str, messages: list[Message], module: ModuleType, config: CompactionConfig, repeat: int
) -> Row:
    dicts = to_openai(messages)
    best = {"ours": float("inf"), "hermes": float("inf")}
    outcomes: dict[str, Outcome] = {}
    for _ in range(repeat):  # alternating, so load on the machine falls on both sides alike
        for side, run in (
            ("ours", ours_run(messages, config)),
            ("hermes", hermes_run(module, dicts, config)),
        ):
            seconds, outcomes[side] = timed(run)
            best[side] = min(best[side], seconds)
    tokens = estimate_messages_tokens(messages, config.estimator())
    auto = auto_fires(module, messages, dicts, config)
    return Row(
        name,
        len(messages),
        tokens,
        auto,
        best["ours"],
        best["hermes"],
        outcomes["ours"],
        outcomes["hermes"],
    )


def conversations() -> Iterator[tuple[str, list[Message]]]:
    for path in sorted(TRANSCRIPTS.glob("*.json")):
        yield path.stem, load_transcript(path.stem)
    for size in SIZES:
        yield f"synthetic {size:,}", synthetic(size)
    for name in shapes.SHAPES:  # issue 24: the shapes the shared transcripts lack
        yield SHAPE + name, shapes.generate(name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--hermes-venv", type=Path, default=hermes.DEFAULT_VENV)
    args = parser.parse_args(argv)
    module = hermes.load(args.hermes_venv)
    config = CompactionConfig(context_window=CONTEXT_WINDOW, threshold_percent=THRESHOLD_PERCENT)
    print(f"$ python -m benchmarks.versus {' '.join(argv or sys.argv[1:])}".rstrip())
    print(
        f"python {platform.python_version()} on {platform.machine()}, hermes-agent "
        f"{hermes.VERSION}, threshold {config.threshold_tokens:,} tokens on both sides, "
        f"best of {args.repeat} alternating runs per side"
    )
    print(GOAL)
    print(
        f"{'conversation':34} {'msgs':>6} {'tokens':>7} {'auto':>5} | "
        f"{'summ':>5} {'out':>5} {'tok aft':>7} {'Hsumm':>5} {'H out':>5} {'H tok':>7} | "
        f"{'us/ktok':>8} {'H us/kt':>8} | "
        f"{'ours ms':>8} {'Herm ms':>8} {'ratio':>7} {'per tok':>8}  "
        "(ratio = Hermes / ours; per tok: time per token freed; us/ktok: each side's "
        "microseconds per 1,000 tokens it freed)"
    )
    rows: list[Row] = []
    for name, messages in conversations():
        rows.append(measure(name, messages, module, config, args.repeat))
        print(row_line(rows[-1]), flush=True)
    shared = [r for r in rows if not r.name.startswith("synthetic")]
    print(total_line("ALL SHARED TRANSCRIPTS", shared))
    print(total_line("SHAPES (synthetic)", [r for r in rows if r.name.startswith(SHAPE)]))
    print(total_line("OVERALL (transcripts + synthetic)", rows))
    print(verdict(rows))
    print(freed_verdict(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
