"""``recall SESSION QUERY`` (docs/architecture.md, "Recall"): the session's compacted originals
matching a query, within a token budget, as ``GET /api/sessions/{id}/recall`` and the model's
tool read them."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from compaction.cli.common import open_producers, print_json
from compaction.producers.recall import DEFAULT_TOKENS, as_text


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "recall", help="search a session's compacted messages (what the summary replaced)"
    )
    parser.add_argument("session")
    parser.add_argument("query", help="the words to look for")
    parser.add_argument(
        "--max-tokens",
        type=int,
        default=DEFAULT_TOKENS,
        help=f"the results' budget, estimated tokens (default {DEFAULT_TOKENS})",
    )
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(run=run_recall)


def run_recall(args: argparse.Namespace, out: TextIO | None = None) -> int:
    answer = open_producers().recall(args.session, args.query, args.max_tokens)
    if args.json:
        print_json(answer, out)
    else:
        print(as_text(answer), file=out)
    return 0
