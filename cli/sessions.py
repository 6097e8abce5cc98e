"""``import``, ``export``, ``history`` and ``stats``: sessions as a person or a script sees them."""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from cli.common import open_producers, open_store, print_json
from compaction.errors import InvalidRequest
from compaction.formats import from_openai, to_openai
from compaction.messages import Message
from compaction.tokens import estimate_tokens
from compaction.validate import problems
from producers.context import Producers
from store.records import StoredMessage


def register(commands: Any) -> None:
    imp = commands.add_parser("import", help="store an OpenAI-format JSON transcript")
    imp.add_argument("file", type=Path)
    imp.add_argument("--session", help="append to this session (created if missing)")
    imp.add_argument("--agent", help="a new session's agent (created with defaults if missing)")
    imp.set_defaults(run=run_import)

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
    if not isinstance(raw, list):
        raise InvalidRequest(
            f"{path} must hold a JSON list of messages, not a {type(raw).__name__}"
        )
    return from_openai(raw)


def _open_turn(view: Sequence[StoredMessage]) -> list[Message]:
    """The stored turn that new messages may continue: the last assistant call still waiting
    for results, with the results it has."""
    for index in range(len(view) - 1, -1, -1):
        message = view[index].message
        if message.role != "tool":
            return [s.message for s in view[index:]] if message.tool_calls else []
    return []


def run_import(args: argparse.Namespace, out: TextIO | None = None) -> int:
    messages = read_transcript(args.file)
    store = open_store()
    session_id = args.session
    exists = session_id is not None and store.session_exists(session_id)
    context = _open_turn(store.load_history(session_id)) if exists else []
    broken = problems([*context, *messages], provider="openai")
    if broken:
        more = f" (and {len(broken) - 1} more)" if len(broken) > 1 else ""
        raise InvalidRequest(f"{args.file}: {broken[0]}{more}; nothing stored")
    if exists:
        store.append_messages(session_id, messages)
    else:  # the session, its agent and its rows in one transaction: a refusal stores nothing
        session_id = store.create_session(
            session_id, agent_id=args.agent, messages=messages, add_missing_agent=True
        )
    print(session_id, file=out)
    return 0


def run_export(args: argparse.Namespace, out: TextIO | None = None) -> int:
    view = open_store().load_history(args.session, args.view)
    print_json(to_openai(s.message for s in view), out)
    return 0


def history_rows(view: Sequence[StoredMessage]) -> list[dict[str, Any]]:
    return [
        {
            "id": s.id,
            "seq": s.seq,
            "role": s.message.role,
            "content": s.message.content,
            "tool_calls": [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in s.message.tool_calls
            ],
            "tool_call_id": s.message.tool_call_id,
            "compacted_at": s.compacted_at.isoformat() if s.compacted_at else None,
            "compacted_into_id": s.compacted_into_id,
            "is_compaction_summary": s.is_compaction_summary,
            "pruned_at": s.pruned_at.isoformat() if s.pruned_at else None,
            # an event row's systemType, event and figures; a restored summary's restoredByRunId
            "metadata": s.metadata,
        }
        for s in view
    ]


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
            ]
        )
        calls = f" → {', '.join(c.name for c in m.tool_calls)}" if m.tool_calls else ""
        text = " ".join(m.content.split())
        print(
            f"{stored.id:>7} {stored.seq:>6} {marks} {m.role:<9} "
            + shown(f"{text[:90]}{'…' if len(text) > 90 else ''}{calls}"),
            file=out,
        )
    print(f"({len(view)} rows; S summary, C compacted, P pruned, E compaction event)", file=out)
    return 0


def session_stats(ctx: Producers, session_id: str) -> dict[str, Any]:
    store = ctx.store
    session = ctx.contexts.resolve(session_id)
    estimate = ctx.estimator
    view = store.load_history(session_id)
    by_role: dict[str, int] = {}
    segments = {"conversation": 0, "tool_loop": 0}
    for stored in view:
        m = stored.message
        tokens = estimate_tokens(m, estimate)
        by_role[m.role] = by_role.get(m.role, 0) + tokens
        # The context-stats split: what was said versus the ReAct loop (calls and results).
        loop = m.role == "tool" or bool(m.tool_calls)
        segments["tool_loop" if loop else "conversation"] += tokens
    used = sum(by_role.values())
    runs = store.runs(session_id)
    last = runs[-1] if runs else None
    return {
        "sessionId": session_id,
        "messages": len(view),
        "usedTokens": used,
        "maxTokens": session.window,
        "percent": round(100 * used / session.window, 1),
        "thresholdPercent": session.threshold_percent,
        "thresholdTokens": session.threshold_tokens,
        "estimated": True,
        "tokensByRole": by_role,
        "tokensBySegment": segments,
        "compactions": store.compaction_counts([session_id]).get(session_id, 0),
        "lastRun": None
        if last is None
        else {
            "id": last.id,
            "status": last.status,
            "code": last.code,
            "reason": last.reason,
            "tokensBefore": last.tokens_before,
            "tokensAfter": last.tokens_after,
            "removedCount": last.removed_count,
            "finishedAt": last.finished_at.isoformat(),
        },
    }


def run_stats(args: argparse.Namespace, out: TextIO | None = None) -> int:
    stats = session_stats(open_producers(), args.session)
    if args.json:
        print_json(stats, out)
        return 0
    print(
        f"session {stats['sessionId']}: {stats['messages']} messages, "
        f"~{stats['usedTokens']:,} of {stats['maxTokens']:,} tokens ({stats['percent']}%), "
        f"threshold {stats['thresholdPercent']}% ({stats['thresholdTokens']:,}), "
        f"compacted {stats['compactions']} times",
        file=out,
    )
    print(
        "by role:    " + ", ".join(f"{k} {v:,}" for k, v in stats["tokensByRole"].items()), file=out
    )
    seg = stats["tokensBySegment"]
    print(
        f"by segment: conversation {seg['conversation']:,}, tool loop {seg['tool_loop']:,}",
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
