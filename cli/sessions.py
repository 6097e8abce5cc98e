"""``import``, ``export``, ``history`` and ``stats``: sessions as a person or a script sees them."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any, TextIO

from compaction.cli.common import open_producers, open_store, print_json
from compaction.core.errors import InvalidRequest
from compaction.core.formats import to_openai
from compaction.core.messages import Message
from compaction.producers.transcripts import parse_transcript, store_transcript, title_of
from compaction.producers.views import history_rows
from compaction.service.settings import Settings


def register(commands: Any) -> None:
    imp = commands.add_parser("import", help="store an OpenAI-format JSON transcript")
    imp.add_argument("file", type=Path)
    imp.add_argument("--session", help="append to this session (created if missing)")
    imp.add_argument("--agent", help="a new session's agent (created with defaults if missing)")
    imp.add_argument(
        "--title", help="the session's name (default: a new session is named after the file)"
    )
    imp.set_defaults(run=run_import)

    session = commands.add_parser("session", help="name a session")
    actions = session.add_subparsers(dest="action", required=True, metavar="ACTION")
    rename = actions.add_parser("rename", help="the name the console shows for a session")
    rename.add_argument("session")
    rename.add_argument("title", help='the new name (1 to 128 characters; "" clears it)')
    rename.set_defaults(run=run_rename)

    exp = commands.add_parser("export", help="print a session as an OpenAI-format transcript")
    exp.add_argument("session")
    # No display view: its event rows are the UI's bubbles, not conversation; in a transcript
    # they would become system messages that a re-import hands to the model.
    exp.add_argument("--view", choices=("full", "compacted"), default="compacted")
    exp.set_defaults(run=run_export)

    hist = commands.add_parser("history", help="the stored history of a session")
    hist.add_argument("session")
    hist.add_argument(
        "--view",
        choices=("compacted", "display", "full"),
        required=True,
        help="compacted: what the model gets; display: that with the compaction events, as "
        "the user's screen shows it after a reload; full: every row",
    )
    hist.add_argument("--json", action="store_true")
    hist.set_defaults(run=run_history)

    stats = commands.add_parser("stats", help="context figures of a session")
    stats.add_argument("session")
    stats.add_argument("--json", action="store_true")
    stats.set_defaults(run=run_stats)


def read_transcript(path: Path) -> list[Message]:
    """A transcript file as messages; one clear line for each way it can be wrong."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise InvalidRequest(f"{path} is not valid JSON (line {err.lineno}: {err.msg})") from None
    except UnicodeDecodeError as err:
        raise InvalidRequest(f"{path} is not UTF-8 text (byte {err.start})") from None
    except RecursionError:  # the decoder's own limit, far past any transcript's nesting
        raise InvalidRequest(f"{path} holds JSON nested deeper than can be read") from None
    return parse_transcript(raw, str(path))


def run_import(args: argparse.Namespace, out: TextIO | None = None) -> int:
    messages = read_transcript(args.file)
    settings = Settings()
    store = open_store(settings)
    title = args.title
    # a new session is named after its file; one appended to keeps its name
    if title is None and not (args.session and store.session_exists(args.session)):
        title = title_of(str(args.file))
    session_id = store_transcript(
        store,
        settings,
        messages,
        session_id=args.session,
        agent_id=args.agent,
        source=str(args.file),
        title=title,
    )
    print(session_id, file=out)
    return 0


def run_rename(args: argparse.Namespace, out: TextIO | None = None) -> int:
    open_store().rename_session(args.session, args.title or None)
    print(f"session {args.session}: " + shown(args.title or "(no title: its id)"), file=out)
    return 0


def run_export(args: argparse.Namespace, out: TextIO | None = None) -> int:
    view = open_store().load_history(args.session, args.view)
    print_json(to_openai(s.message for s in view), out)
    return 0


#: What a terminal would act on rather than show: C0 controls (escape sequences start with ESC,
#: OSC 52 writes the clipboard), DEL, C1 controls (U+009B is a one-character CSI), and the
#: bidirectional overrides and isolates that reorder what is displayed.
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def shown(text: str) -> str:
    """``text`` for a person's terminal: each control character written as its escape
    (``\\x1b``, ``\\u202e``), so the terminal shows it instead of executing it."""
    return _CONTROLS.sub(lambda match: ascii(match.group())[1:-1], text)


def run_history(args: argparse.Namespace, out: TextIO | None = None) -> int:
    view = open_store().load_history(args.session, args.view)
    if args.json:
        print_json(history_rows(view), out)
        return 0
    for stored in view:
        m = stored.message
        marks = "".join(
            [
                "S" if stored.is_compaction_summary else " ",
                "C" if stored.compacted_at else " ",
                "P" if stored.pruned_at else " ",
                "E" if stored.is_event else " ",
                "N" if m.pinned else " ",  # pinned: never summarized or pruned
            ]
        )
        calls = f" → {', '.join(c.name for c in m.tool_calls)}" if m.tool_calls else ""
        text = " ".join(m.content.split())
        print(
            f"{stored.id:>7} {stored.seq:>6} {marks} {m.role:<9} "
            + shown(f"{text[:90]}{'…' if len(text) > 90 else ''}{calls}"),
            file=out,
        )
    legend = "S summary, C compacted, P pruned, E compaction event, N pinned"
    print(f"({len(view)} rows; {legend})", file=out)
    return 0


def run_stats(args: argparse.Namespace, out: TextIO | None = None) -> int:
    stats = open_producers().session_stats(args.session)
    if args.json:
        print_json(stats, out)
        return 0
    threshold = (
        f"budget {stats['thresholdTokens']:,} tokens"
        if stats["tokenBudget"]
        else f"threshold {stats['thresholdPercent']}% ({stats['thresholdTokens']:,})"
    )
    times = "time" if stats["compactions"] == 1 else "times"
    print(
        f"session {stats['sessionId']}: {stats['messages']} messages, "
        f"~{stats['usedTokens']:,} of {stats['maxTokens']:,} tokens ({stats['percent']}%), "
        f"{threshold}, compacted {stats['compactions']} {times}",
        file=out,
    )
    print(
        "by role:    " + ", ".join(f"{k} {v:,}" for k, v in stats["tokensByRole"].items()), file=out
    )
    print(
        "by segment: " + ", ".join(f"{k} {v:,}" for k, v in stats["tokensBySegment"].items()),
        file=out,
    )
    turn = stats["latestTurn"]
    if turn:
        print(
            f"last turn:  {turn['decision']}, ~{turn['totalTokens']:,} tokens sent "
            f"(budget {turn['thresholdTokens'] or 0:,}), {turn['createdAt']}",
            file=out,
        )
    aux, cost = stats.get("auxTokens") or {}, stats.get("compactionCost")
    if aux.get("input") or aux.get("output"):  # the receipts (docs/architecture.md, "Receipt")
        priced = f"${cost:.4f}" if cost is not None else "no price set"
        print(
            f"compaction: auxiliary model {aux['input']:,} in / {aux['output']:,} out tokens, "
            f"{priced}",
            file=out,
        )
    last = stats["lastRun"]
    if last:
        code = f" [{last['code']}]" if last["code"] else ""
        print(
            f"last run:   #{last['id']} {last['reason']} {last['status']}{code}, "
            f"{last['tokensBefore']} → {last['tokensAfter']} tokens, {last['finishedAt']}",
            file=out,
        )
    return 0
