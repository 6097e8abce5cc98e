"""``compaction demo``: the compaction pipeline on a bundled real transcript, offline.

It needs no service and no API key: the offline (extractive) summarizer stands in for the
auxiliary model. Storage, Redis and the worker join the demo as those parts land.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

from compaction import CompactionConfig, compact, estimate_messages_tokens
from compaction.engine import CompactionResult, SummaryRequest
from compaction.formats import from_openai
from compaction.messages import Message
from compaction.offline import OfflineSummarizer

BUNDLED = "msa_deepseek-chat_pydicom-1139.json"
BUNDLED_ZH = "deerflow_5aa47db1_zh.json"


def register(commands: Any) -> None:
    parser = commands.add_parser("demo", help="compact a bundled real transcript, offline")
    parser.add_argument("--transcript", type=Path, help="a JSON transcript (OpenAI format)")
    parser.add_argument("--language", choices=("zh", "en"), help="summary language")
    parser.add_argument(
        "--context-window",
        type=int,
        default=16_000,
        help="the model's window in tokens (default 16000, small enough for the bundled "
        "transcript to need compacting)",
    )
    parser.set_defaults(run=run)


class _Progress:
    """Wraps the summarizer to say what it is doing while it works."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.inner = OfflineSummarizer()

    def summarize(self, request: SummaryRequest) -> str:
        print(
            f"  summarizing {len(request.messages)} turns "
            f"(chunk {request.chunk_index + 1}/{request.chunk_count}, "
            f"budget ~{request.budget_tokens} tokens)",
            file=self.out,
        )
        return self.inner.summarize(request)


def _load(path: Path | None, language: str | None) -> tuple[str, list[Message]]:
    if path is not None:
        name, text = path.name, path.read_text(encoding="utf-8")
    else:
        name = BUNDLED_ZH if language == "zh" else BUNDLED
        text = resources.files("worker.demo_data").joinpath(name).read_text(encoding="utf-8")
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"{name} is not valid JSON: {err}") from None
    if not isinstance(raw, list):
        raise ValueError(f"{name} must hold a JSON list of messages")
    return name, [replace(m, id=i) for i, m in enumerate(from_openai(raw), start=1)]


def _table(result: CompactionResult, before_count: int, seconds: float, out: TextIO) -> None:
    saved = 1 - result.tokens_after / result.tokens_before if result.tokens_before else 0.0
    rows = [
        ("messages", f"{before_count:,}", f"{len(result.messages):,}", ""),
        (
            "tokens (estimated)",
            f"{result.tokens_before:,}",
            f"{result.tokens_after:,}",
            f"-{saved:.1%}",
        ),
        ("tool outputs pruned", "", f"{result.pruned_count}", ""),
        ("messages summarized", "", f"{result.removed_count}", ""),
        ("identifiers kept verbatim", "", f"{result.ledger_items}", ""),
    ]
    print(f"\n{'':28}{'before':>10}{'after':>10}", file=out)
    for label, before, after, note in rows:
        print(f"{label:28}{before:>10}{after:>10}  {note}", file=out)
    phases = ", ".join(f"{k} {v * 1000:.1f} ms" for k, v in result.timings.items())
    print(f"\ntime: {seconds * 1000:.0f} ms ({phases})", file=out)


def run(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    name, messages = _load(args.transcript, args.language)
    tokens = estimate_messages_tokens(messages)
    print(f"[1/3] loaded {name}: {len(messages)} messages, ~{tokens:,} tokens", file=out)
    config = CompactionConfig(
        context_window=args.context_window, summary_language=args.language or "auto"
    )
    print(
        f"[2/3] compacting as /compact would (window {config.context_window:,} tokens, "
        f"threshold {config.threshold_percent}%, offline summarizer)",
        file=out,
    )
    started = time.perf_counter()
    result = compact(messages, config, _Progress(out), reason="manual")
    seconds = time.perf_counter() - started
    print("[3/3] done", file=out)
    _table(result, len(messages), seconds, out)
    print("\nsummary message:\n", file=out)
    print(result.summary_text, file=out)
    return 0
