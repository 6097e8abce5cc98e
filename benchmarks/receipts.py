"""The receipt of a compaction of every shared transcript (docs/receipts.md; issue 23).

    python -m benchmarks.receipts [--transcripts DIR ...]

Each transcript is compacted as the benchmarks compact it (``benchmarks.survival``: a manual
``compact_staged`` with the instant summarizer, which writes nothing useful, so only the ledger
and the kept messages keep anything), and each stage's receipt is taken as the worker takes it
(``compaction.core.receipt``). Printed as a markdown table: per transcript, the stages that ran,
the exact identifiers of the compacted spans kept / total, the user messages kept word for word /
total (the rest folded into the summary), and the missing identifiers by kind.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from benchmarks.engine import TRANSCRIPTS, InstantSummarizer
from benchmarks.survival import config_for
from compaction import compact_staged, compacted_span, receipt_of
from compaction.core.messages import Message, messages_from_dicts
from compaction.core.receipt import SpanReceipt

#: the repository's copies of the shared transcripts (tests/data/transcripts: all of them)
DEFAULT_DIRS = (TRANSCRIPTS,)


@dataclass(frozen=True)
class Row:
    transcript: str
    stages: str
    receipts: tuple[SpanReceipt, ...]

    @property
    def kept(self) -> int:
        return sum(r.kept for r in self.receipts)

    @property
    def total(self) -> int:
        return sum(r.total for r in self.receipts)

    @property
    def verbatim(self) -> int:
        return sum(r.verbatim for r in self.receipts)

    @property
    def users(self) -> int:
        return sum(r.user_total for r in self.receipts)

    def missing_by_kind(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for receipt in self.receipts:
            for kind, count in receipt.missing_counts.items():
                if count:
                    out[kind] = out.get(kind, 0) + count
        return out


def load(path: Path) -> list[Message]:
    raw = json.loads(path.read_text(encoding="utf-8"))
    return [replace(m, id=i) for i, m in enumerate(messages_from_dicts(raw), start=1)]


def transcripts(dirs: Iterable[Path]) -> list[Path]:
    """Every transcript once by name, the first folder that holds it winning."""
    found: dict[str, Path] = {}
    for folder in dirs:
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
            found.setdefault(path.stem, path)
    return [found[name] for name in sorted(found)]


def row(path: Path) -> Row:
    """The transcript compacted through both stages as the worker runs them, each stage's
    receipt computed on that stage's input."""
    messages = load(path)
    config = config_for(messages)
    staged = compact_staged(messages, config, InstantSummarizer(), reason="manual")
    receipts, stages, before = [], "", messages
    for name, result in (("h", staged.history), ("l", staged.loop)):
        if result is None:
            continue
        receipts.append(receipt_of(compacted_span(before, result), result))
        stages, before = stages + name, result.messages
    return Row(path.stem, stages, tuple(receipts))


def _share(kept: int, total: int) -> str:
    return f"{kept}/{total} ({kept / total:.1%})" if total else "0/0"


def table(rows: Sequence[Row]) -> list[str]:
    lines = [
        "| transcript | stages | identifiers kept | user messages verbatim | not kept, by kind |",
        "|---|---|---:|---:|---|",
    ]
    for r in rows:
        missing = ", ".join(f"{k} {n}" for k, n in r.missing_by_kind().items()) or "-"
        lines.append(
            f"| {r.transcript} | {r.stages} | {_share(r.kept, r.total)} "
            f"| {_share(r.verbatim, r.users)} | {missing} |"
        )
    kept, total = sum(r.kept for r in rows), sum(r.total for r in rows)
    verbatim, users = sum(r.verbatim for r in rows), sum(r.users for r in rows)
    lines.append(f"| **all** | | {_share(kept, total)} | {_share(verbatim, users)} | |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--transcripts",
        type=Path,
        nargs="+",
        help="folders of transcripts (default: tests/data/transcripts)",
    )
    args = parser.parse_args(argv)
    print(f"$ python -m benchmarks.receipts {' '.join(argv or sys.argv[1:])}".rstrip())
    print()
    rows = [row(path) for path in transcripts(args.transcripts or DEFAULT_DIRS)]
    print("\n".join(table(rows)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
