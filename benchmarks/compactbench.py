"""``compactbench`` (PyPI) scored offline on the compacted text itself (issue 24).

    python -m benchmarks.compactbench [--suites DIR] [--cases 5] [--difficulty medium] [--cycles 2]
                                      [--hermes] [--without-user-words]

compactbench generates cases from its templates (a transcript, ground truth, evaluation items)
and has a model answer each item's question from the compacted context. Without a model, its
"the answer must mention X" items (``contains_normalized``) are scored on the compacted text:
can the model find X at all. Ours is ``compact_staged(..., reason="manual")`` with the extractive
``OfflineSummarizer``, the first message protected (``protect_first_n=1``) and the newest one as
the tail; ``--hermes`` puts Hermes Agent's deterministic no-model fallback beside it, with the
same protection. For the decision templates (``decision_override``) the table also says how
often the rejected plan is the summary's goal.

The templates are not in compactbench's wheel: they live in its repository
(``benchmarks/public/<suite>/*.yaml``); ``--suites`` names a copy of that folder
(default ``.bench/compactbench-suites``, ignored by git). The package itself is installed as
``benchmarks/conformance.py`` installs the kits.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from benchmarks.conformance import ensure_kits, hermes_compress
from benchmarks.hermes import BENCH
from compaction import CompactionConfig, Message, NothingToCompact, compact_staged
from compaction.core.offline import OfflineSummarizer
from compaction.core.prompts import HEADINGS

SUITES = BENCH / "compactbench-suites"
GOAL = HEADINGS["en"]["goal"]


#: a turn of the context: the kit's (role, text), or a message our compaction returned (a
#: summary stays a summary in the next cycle, as in the store)
Turn = tuple[str, str] | Message
Turns = list[Turn]
#: the assistant's side of a continuation pair (compactbench asks the model for it; no model)
REPLY = "Noted; continuing from the plan above."


def ours(turns: Sequence[Turn], user_words: bool = True) -> Turns:
    """The context after ``/compact``: the first message protected, the newest as the tail;
    ``user_words=False``: without the summary's verbatim user-words section (the summarizer's
    own lines alone). A summary comes back as a user turn, as the engine places it."""
    messages = [
        replace(t, id=i) if isinstance(t, Message) else Message(role=t[0], content=t[1], id=i)  # type: ignore[arg-type]
        for i, t in enumerate(turns, 1)
    ]
    size = sum(len(m.content) for m in messages) // 4
    config = CompactionConfig(
        context_window=max(1_000, size // 2),
        protect_first_n=1,
        min_tail_messages=1,
        tail_token_budget_ratio=0.01,
        **({} if user_words else {"user_words_max_tokens": 0}),
    )
    try:
        staged = compact_staged(messages, config, OfflineSummarizer(), reason="manual")
    except NothingToCompact:
        return list(messages)
    return list(staged.messages)


def pair(turn: Turn) -> tuple[str, str]:
    return (turn.role, turn.content) if isinstance(turn, Message) else turn


def hermes(turns: Sequence[Turn]) -> Turns:
    out = hermes_compress([{"role": r, "content": t} for r, t in map(pair, turns)])
    return [(str(m.get("role")), str(m.get("content") or "")) for m in out]


def text_of(turns: Sequence[Turn]) -> str:
    return "\n".join(f"[{r}] {t}" for r, t in map(pair, turns))


def goal_of(text: str) -> str:
    """The summary's goal section (ours); Hermes's fallback has none: empty."""
    if GOAL not in text:
        return ""
    return text.split(GOAL, 1)[1].split("\n#", 1)[0]


@dataclass
class Tally:
    items: int = 0
    present: int = 0
    decisions: int = 0
    rejected_goal: int = 0
    missing: list[str] = field(default_factory=list)


def score(case: Any, text: str, tally: Tally) -> None:
    """The case's ``contains_normalized`` items found in ``text``; for a decision case, whether
    the rejected plan stands in the goal."""
    from compactbench.scoring import contains_normalized  # type: ignore[import-not-found,unused-ignore]

    for item in case.evaluation_items:
        if item.expected.get("check") != "contains_normalized":
            continue
        tally.items += 1
        if contains_normalized(item.expected["value"], text) >= 1.0:
            tally.present += 1
        else:
            tally.missing.append(f"{case.case_id} {item.key}")
    if case.ground_truth.locked_decisions:
        tally.decisions += 1
        goal = goal_of(text).casefold()
        rejected = case.ground_truth.forbidden_behaviors
        tally.rejected_goal += int(any(r.casefold() in goal for r in rejected))


def run(
    compact: Callable[[Sequence[Turn]], Turns],
    suites: Path,
    cases: int,
    level: str,
    cycles: int,
) -> dict[str, Tally]:
    """Per template: its cases for seeds 0..cases-1; each compacted, scored, then continued
    (compactbench's drift cycles: a seeded user prompt and a reply appended to the compacted
    context) and compacted again, ``cycles`` times; every cycle is scored."""
    from compactbench.dsl.models import DifficultyLevel  # type: ignore[import-not-found,unused-ignore]
    from compactbench.dsl.parser import load_suite  # type: ignore[import-not-found,unused-ignore]
    from compactbench.engine.generation import generate_case  # type: ignore[import-not-found,unused-ignore]
    from compactbench.runner.continuation import select_continuation_prompt  # type: ignore[import-not-found,unused-ignore]

    tallies: dict[str, Tally] = {}
    for suite in sorted(p for p in suites.iterdir() if p.is_dir()):
        for template in load_suite(suite):
            tally = tallies.setdefault(template.key, Tally())
            for seed in range(cases):
                case = generate_case(template, seed, DifficultyLevel(level))
                context = compact([(t.role.value, t.content) for t in case.transcript.turns])
                score(case, text_of(context), tally)
                for cycle in range(1, cycles + 1):
                    prompt = select_continuation_prompt(seed, cycle)
                    context = compact([*context, ("user", prompt), ("assistant", REPLY)])
                    score(case, text_of(context), tally)
    return tallies


def table(results: dict[str, dict[str, Tally]]) -> list[str]:
    names = list(results)
    lines = ["| template | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    keys = sorted({k for r in results.values() for k in r})
    for key in [*keys, "all"]:
        cells = []
        for name in names:
            ts = list(results[name].values()) if key == "all" else [results[name][key]]
            n, k = sum(t.items for t in ts), sum(t.present for t in ts)
            d, g = sum(t.decisions for t in ts), sum(t.rejected_goal for t in ts)
            extra = f"; rejected plan as goal {g}/{d}" if d else ""
            cells.append(f"{k}/{n} ({k / n:.2f}){extra}" if n else "-")
        lines.append(f"| {key} | " + " | ".join(cells) + " |")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.compactbench")
    parser.add_argument("--suites", type=Path, default=SUITES)
    parser.add_argument("--cases", type=int, default=5, help="cases (seeds) per template")
    parser.add_argument("--difficulty", default="medium", choices=["easy", "medium", "hard"])
    parser.add_argument("--cycles", type=int, default=2, help="drift cycles after the first")
    parser.add_argument("--hermes", action="store_true", help="Hermes's no-model fallback too")
    parser.add_argument(
        "--without-user-words", action="store_true", help="ours without that section too"
    )
    args = parser.parse_args(argv)
    if not args.suites.is_dir():
        print(f"no templates at {args.suites}: copy compactbench's benchmarks/public there")
        return 2
    ensure_kits()
    sides: dict[str, Callable[[Sequence[Turn]], Turns]] = {"ours (offline)": ours}
    if args.without_user_words:
        sides["ours, no user-words section"] = lambda turns: ours(turns, user_words=False)
    if args.hermes:
        sides["hermes-agent 0.19.0 (no-model fallback)"] = hermes
    results = {
        n: run(f, args.suites, args.cases, args.difficulty, args.cycles) for n, f in sides.items()
    }
    print("$ python -m benchmarks.compactbench " + " ".join(argv or sys.argv[1:]))
    print(
        f"{args.cases} cases a template, {args.difficulty}, {args.cycles} drift cycles after the"
        " first compaction, each scored; presence of 'must mention' values in the context"
    )
    print("\n".join(table(results)))
    for name, tallies in results.items():
        missing = [m for t in tallies.values() for m in t.missing]
        print(f"{name}: missing {missing[:12]}{' …' if len(missing) > 12 else ''}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
