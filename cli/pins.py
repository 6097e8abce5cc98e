"""``pin`` and ``unpin`` (docs/architecture.md, "Pins"): a stored message no compaction
summarizes or prunes, as ``POST``/``DELETE /api/sessions/{id}/messages/{messageId}/pin``."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from compaction.cli.common import open_producers, print_json


def register(commands: Any) -> None:
    for name, help_text in (
        ("pin", "pin a message: no compaction summarizes or prunes it"),
        ("unpin", "unpin a message: later compactions may summarize it"),
    ):
        parser = commands.add_parser(name, help=help_text)
        parser.add_argument("session")
        parser.add_argument("message_id", type=int, help="the row's id (compaction history)")
        parser.add_argument("--json", action="store_true")
        parser.set_defaults(run=run_pin, pinned=name == "pin")


def run_pin(args: argparse.Namespace, out: TextIO | None = None) -> int:
    ctx = open_producers()
    change = (ctx.pin if args.pinned else ctx.unpin)(args.session, args.message_id)
    if args.json:
        print_json(change, out)
        return 0
    state = "pinned" if change["pinned"] else "unpinned"
    already = "" if change["changed"] else " (already)"
    print(
        f"message {change['messageId']} of session {change['sessionId']}: {state}{already}; "
        f"~{change['pinnedTokens']:,} pinned tokens",
        file=out,
    )
    return 0
