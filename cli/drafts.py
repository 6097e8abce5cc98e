"""``draft show|edit|apply|discard ID``: a review's draft (docs/architecture.md, "Review";
``compaction compact SESSION --review`` writes one)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from compaction.cli.common import open_producers, print_json
from compaction.gateway.responses import AppliedDraft, Draft
from compaction.producers.drafts import applied_row, draft_row
from compaction.store.drafts import DraftRecord


def register(commands: Any) -> None:
    draft = commands.add_parser("draft", help="a review's draft: show, edit, apply, discard")
    actions = draft.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, run, help_text in (
        ("show", run_show, "the draft: its figures and its summary"),
        ("apply", run_apply, "apply it (undo with compaction restore RUN)"),
        ("discard", run_discard, "discard it"),
    ):
        action = actions.add_parser(name, help=help_text)
        action.add_argument("draft_id", type=int)
        action.add_argument("--json", action="store_true")
        action.set_defaults(run=run)
    edit = actions.add_parser("edit", help="replace its summary with a file's text")
    edit.add_argument("draft_id", type=int)
    edit.add_argument("--file", required=True, help="UTF-8 text; '-' reads stdin")
    edit.add_argument("--json", action="store_true")
    edit.set_defaults(run=run_edit)


def _show(draft: DraftRecord, args: argparse.Namespace, out: TextIO | None) -> None:
    row = draft_row(draft)
    if args.json:
        print_json(Draft.of(row).wire(), out)
        return
    edited = ", edited" if draft.edited else ""
    print(
        f"draft {draft.id} of session {draft.session_id}: {draft.status}{edited}, expires "
        f"{draft.expires_at.isoformat(timespec='seconds')}; {row['stage']} stage replaces "
        f"{row['removed_count']} messages, prunes {row['pruned_count']} tool outputs; "
        f"~{draft.tokens_before} -> ~{draft.tokens_after} tokens",
        file=out,
    )
    if draft.summary:
        print(f"\n{draft.summary}", file=out)


def run_show(args: argparse.Namespace, out: TextIO | None = None) -> int:
    _show(open_producers().get_draft(args.draft_id), args, out)
    return 0


def run_edit(args: argparse.Namespace, out: TextIO | None = None) -> int:
    text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text(encoding="utf-8")
    _show(open_producers().edit_draft(args.draft_id, text), args, out)
    return 0


def run_discard(args: argparse.Namespace, out: TextIO | None = None) -> int:
    _show(open_producers().discard_draft(args.draft_id), args, out)
    return 0


def run_apply(args: argparse.Namespace, out: TextIO | None = None) -> int:
    applied = open_producers().apply_draft(args.draft_id)
    if args.json:
        print_json(AppliedDraft.of(applied_row(applied)).wire(), out)
        return 0
    print(
        f"applied draft {args.draft_id}: run {applied.applied.run_id}, "
        f"{applied.applied.removed_count} messages summarized, {applied.applied.pruned_count} "
        f"tool outputs pruned, ~{applied.event.tokens_before} -> ~{applied.event.tokens_after} "
        f"tokens (undo: compaction restore {applied.applied.run_id})",
        file=out,
    )
    return 0
