"""``compact`` (a manual compaction, like ``/compact``) and ``restore`` (undo one)."""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from compaction.cli.common import error_line, open_producers, open_store, print_json
from compaction.core.contract import CompactionFailed
from compaction.producers import trigger
from compaction.producers.wait import wait_for_request


def register(commands: Any) -> None:
    compact = commands.add_parser("compact", help="enqueue a manual compaction (/compact)")
    compact.add_argument("session")
    compact.add_argument("--focus", help="what the summary should keep above all")
    compact.add_argument(
        "--review",
        action="store_true",
        help="write a draft to review instead of applying (compaction draft show ID)",
    )
    compact.add_argument("--context-window", type=int, help="override the window, tokens")
    compact.add_argument("--wait", action="store_true", help="wait for the final event")
    compact.add_argument("--timeout", type=float, default=120.0, help="seconds (with --wait)")
    compact.add_argument("--json", action="store_true")
    compact.set_defaults(run=run_compact)

    restore = commands.add_parser("restore", help="undo one compaction run")
    restore.add_argument("run_id", type=int)
    restore.add_argument("--json", action="store_true")
    restore.set_defaults(run=run_restore)


def run_compact(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Queued, or upgrading the session's queued auto request (``upgraded``, with its id): both
    end in a manual compaction; ``already_pending`` (a manual one is queued) exits 1."""
    ctx = open_producers()
    queued = trigger.request_manual(
        ctx, args.session, focus=args.focus, context_window=args.context_window, review=args.review
    )
    if not args.wait:
        if args.json:
            print_json({"status": queued.status, "requestId": queued.request_id}, out)
        else:
            print(f"{queued.status} {queued.request_id}", file=out)
        if queued.status not in ("enqueued", "upgraded"):
            print(
                f"compaction: a compaction of {args.session} is already "
                f"{queued.status.replace('_', ' ')} (request {queued.request_id})",
                file=sys.stderr,
            )
            return 1
        return 0
    assert queued.request_id is not None
    event = wait_for_request(ctx, args.session, queued.request_id, args.timeout)
    print_json(event.to_wire(), out)
    if isinstance(event, CompactionFailed):
        print(error_line(event.code, event.error), file=sys.stderr)
    return 0 if event.type in ("compaction_done", "compaction_draft") else 1


def run_restore(args: argparse.Namespace, out: TextIO | None = None) -> int:
    run = open_store().restore(args.run_id)
    removed, pruned = run.removed_count or 0, run.pruned_count or 0
    if args.json:
        print_json(
            {
                "runId": run.id,
                "sessionId": run.session_id,
                "status": run.status,
                "restoredMessages": removed,
                "restoredPruned": pruned,
            },
            out,
        )
    else:
        summary = ", its summary hidden" if run.summary_message_id is not None else ""
        print(
            f"restored run {run.id} of session {run.session_id}: {removed} messages visible "
            f"again, {pruned} pruned tool outputs whole again{summary}",
            file=out,
        )
    return 0
