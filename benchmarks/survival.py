"""Which exact identifiers of the compacted span survive compaction (issue "Step 11").

    python -m benchmarks.survival

Per shared transcript and per kind (paths, commands, errors, URLs, ids): the identifiers of the
compacted span, found by the reference extractor below, and the share of them that appears
verbatim in the compacted output (the summary message with its ledger, and the kept messages):
the issue's definition. Beside it, never instead, the share *reachable*: verbatim, or found by
one recall against the stored originals where the summary says the rest did not fit
(``benchmarks/reach.py``). The summarizer writes nothing useful, so only the ledger keeps them.
The reference is defined here, independently of ``compaction.core.identifiers``, so the figure
is not circular.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass

from benchmarks import shapes
from benchmarks.engine import TRANSCRIPTS, load_transcript, window_for
from benchmarks.reach import sqlite_store, stored
from compaction import CompactionConfig, Summarizer, compact, compact_loop, first_stage
from compaction.core.engine import CompactionResult
from compaction.core.messages import Message
from compaction.core.receipt import compacted_span
from compaction.store import Store

KINDS = ("paths", "commands", "errors", "urls", "ids")
SPANS = {
    "middle": "what the stages summarized (the survival benchmark's definition)",
    "receipt": "the summarized middle and the tool outputs phase 1 pruned (the receipt's)",
}
DEFINITIONS = {
    "verbatim": "in the compacted output verbatim (the issue's definition)",
    "reachable": "verbatim, or one recall of it finds it where the summary names recall",
}
GOAL = 0.95
#: Longer items are not identifiers a reader copies (the ledger's cap per item).
MAX_CHARS = 300

_PATH = re.compile(r"(?:~|\.{1,2})?/?(?:[\w.-]+/)+[\w-]+\.[A-Za-z]{1,5}\b")
_ERROR = re.compile(r"Traceback \(most recent call last\)|\b\w+(?:Error|Exception): |\bFAILED\b")
# An error quoted in a long line of prose: its name, up to the end of its sentence.
_ERROR_CLAUSE = re.compile(r"\b\w+(?:Error|Exception): .*?(?=\. |\n|$)")
# An error named in an assistant's prose: its name ("a KeyError", "the ValueError: bad id").
_NAMED_ERROR = re.compile(r"\b[A-Z][A-Za-z0-9_]*(?:Error|Exception)\b")
# RFC 3986 characters but brackets (only an IPv6 host holds them; a markdown image link does:
# "![](https://x.org/logo.svg)](https://x.org/page)" is two URLs); a URL's last character is
# not sentence punctuation, nor a parenthesis (which markdown links close).
_URL = re.compile(r"https?://[A-Za-z0-9\-._~:/?#@!$&'()*+,;=%]*[A-Za-z0-9\-_~/#=&%+]")
# Whole words only: a piece of a date (2024-05-11T01) or of a hyphenated token is no id.
_IDS = re.compile(
    r"(?<![\w-])(?:[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}"  # uuid
    r"|(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}"  # hash: hex, a digit and a letter
    r"|(?=[A-Z0-9]*[A-Z])(?=[A-Z0-9]*\d)[A-Z0-9]{5,12}"  # code: capitals and digits
    r"|[a-z]+(?:_[a-z]+)*_\d{2,})(?![\w-])"  # name_1234
)


def json_strings(value: object) -> Iterator[str]:
    """Every string inside decoded JSON."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from json_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from json_strings(item)


def _arguments(message: Message) -> list[object]:
    out = []
    for call in message.tool_calls:
        try:
            out.append(json.loads(call.arguments))
        except ValueError:
            continue
    return out


def _errors(text: str) -> Iterator[str]:
    for line in text.splitlines():
        if not _ERROR.search(line):
            continue
        if len(line.strip()) <= MAX_CHARS:
            yield line.strip()
        else:
            yield from (m.group(0) for m in _ERROR_CLAUSE.finditer(line))


def identifiers(middle: Iterable[Message]) -> dict[str, set[str]]:
    """The reference identifiers of ``middle`` by kind: paths, URLs and ids in what each message
    said (its text and its calls' decoded arguments), error lines in what the user and the tools
    said, and the first line of each call's ``command``."""
    found: dict[str, set[str]] = {kind: set() for kind in KINDS}
    for message in middle:
        if message.is_summary:
            continue
        arguments = _arguments(message)
        texts = [message.source_text, *(s for a in arguments for s in json_strings(a))]
        for text in texts:
            found["paths"].update(p for p in _PATH.findall(text) if "://" not in p)
            found["urls"].update(_URL.findall(text))
            found["ids"].update(_IDS.findall(text))
        if message.role in ("tool", "user"):
            found["errors"].update(_errors(message.source_text))
        elif message.role == "assistant":  # the errors it names in its own prose
            found["errors"].update(_NAMED_ERROR.findall(message.source_text))
        for args in arguments:
            command = args.get("command") if isinstance(args, dict) else None
            if isinstance(command, str) and command.strip():
                found["commands"].add(command.strip().split("\n", 1)[0])
    return {kind: {i for i in items if len(i) <= MAX_CHARS} for kind, items in found.items()}


def config_for(messages: list[Message], **overrides: int) -> CompactionConfig:
    """The transcript tests' config: each transcript well over its threshold."""
    return CompactionConfig(context_window=window_for(messages), protect_first_n=1, **overrides)


def compacted(
    messages: list[Message], config: CompactionConfig, summarizer: Summarizer
) -> CompactionResult:
    """The first stage's result: the history's, or the loop's for an agent whose whole run
    follows one request (compaction/core/staged.py)."""
    if first_stage(messages, config) == "loop":
        return compact_loop(messages, config, summarizer, reason="manual")
    return compact(messages, config, summarizer, reason="manual")


@dataclass(frozen=True)
class Row:
    transcript: str
    kind: str
    found: int
    kept: int
    missing: tuple[str, ...] = ()
    #: kept, plus the missing ones one recall reaches (``benchmarks/reach.py``)
    reachable: int = 0

    @property
    def share(self) -> float:
        return self.kept / self.found if self.found else 1.0

    @property
    def reach(self) -> float:
        return self.reachable / self.found if self.found else 1.0

    def by(self, definition: str) -> tuple[int, float]:
        """The count and share kept by ``definition`` (``DEFINITIONS``)."""
        if definition == "reachable":
            return self.reachable, self.reach
        return self.kept, self.share


def _middle(messages: list[Message], result: CompactionResult) -> list[Message]:
    start, end = result.middle
    return messages[start:end]


def survival(
    name: str,
    ledger_max_tokens: int | None = None,
    span: str = "middle",
    store: Store | None = None,
) -> list[Row]:
    """One row per kind for ``name`` (a shared transcript, or ``shape:<name>`` of
    ``benchmarks.shapes``), stored in ``store`` (a new temporary SQLite one when ``None``) and
    compacted as the worker does it (``compact_staged``): the loop stage follows when the
    history alone leaves the session over its threshold, so a research agent's tool loop
    (deerflow) is part of the compacted span. ``span="middle"`` counts what the stages
    summarized (this benchmark's definition); ``span="receipt"`` adds the tool outputs phase 1
    pruned outside it (the receipt's, ``compaction/core/receipt.py``)."""
    with ExitStack() as stack:
        if store is None:
            store = stack.enter_context(sqlite_store())
        return _rows(name, ledger_max_tokens, span, store)


def _rows(name: str, ledger_max_tokens: int | None, span: str, store: Store) -> list[Row]:
    messages = load(name)
    cap = {} if ledger_max_tokens is None else {"ledger_max_tokens": ledger_max_tokens}
    done = stored(store, messages, config_for(messages, **cap))
    spans: list[Message] = []
    before = done.messages
    for result in (done.staged.history, done.staged.loop):
        if result is None:
            continue
        spans += compacted_span(before, result) if span == "receipt" else _middle(before, result)
        before = result.messages  # the loop's indexes are in what the history stage left
    output = "\n".join(m.content for m in done.staged.messages)
    rows = []
    for kind, wanted in identifiers(spans).items():
        missing = sorted(i for i in wanted if i not in output)
        kept = len(wanted) - len(missing)
        reached = kept + done.reached(missing)
        rows.append(Row(name, kind, len(wanted), kept, tuple(missing), reached))
    return rows


def load(name: str) -> list[Message]:
    """A shared transcript, or a synthetic shape (``shape:research``)."""
    if name.startswith("shape:"):
        return shapes.generate(name.removeprefix("shape:"))
    return load_transcript(name)


def names() -> list[str]:
    """Every shared transcript, then every synthetic shape."""
    return [
        *sorted(p.stem for p in TRANSCRIPTS.glob("*.json")),
        *(f"shape:{shape}" for shape in shapes.SHAPES),
    ]


def rows(ledger_max_tokens: int | None = None, span: str = "middle") -> list[Row]:
    """Every transcript's and shape's rows (one temporary store for them all); under the
    config's ledger cap, or ``ledger_max_tokens``."""
    with sqlite_store() as store:
        return [row for name in names() for row in survival(name, ledger_max_tokens, span, store)]


def table(all_rows: Sequence[Row], definition: str = "verbatim") -> list[str]:
    """Transcript x kind: kept/found by ``definition`` and the share; a kind under the goal is
    marked."""
    lines = [f"{'transcript':34} " + " ".join(f"{kind:>18}" for kind in KINDS)]
    by_name: dict[str, dict[str, Row]] = {}
    for row in all_rows:
        by_name.setdefault(row.transcript, {})[row.kind] = row
    for name, kinds in by_name.items():
        cells = []
        for kind in KINDS:
            kept, share = kinds[kind].by(definition)
            mark = " " if share >= GOAL else "!"
            cells.append(f"{kept:>5}/{kinds[kind].found:<5} {share:6.1%}{mark}")
        lines.append(f"{name:34} " + " ".join(f"{cell:>18}" for cell in cells))
    lines.append(f"goal: >= {GOAL:.0%} of every kind on every transcript (! marks a miss)")
    return lines


def markdown(
    middle: Sequence[Row], receipt: Sequence[Row], definition: str = "verbatim"
) -> list[str]:
    """docs/survival.md's table by ``definition``: per transcript and kind, kept/found by the
    middle's span, then by the receipt's where it differs; a cell under the goal in bold."""
    by_key = {(r.transcript, r.kind): r for r in receipt}
    lines = ["| transcript | " + " | ".join(KINDS) + " |", "|---" + "|---:" * len(KINDS) + "|"]
    names = list(dict.fromkeys(r.transcript for r in middle))
    for name in names:
        cells = []
        for row in (r for r in middle if r.transcript == name):
            other = by_key[(name, row.kind)]
            cell = _cell(row, definition)
            if (other.by(definition)[0], other.found) != (row.by(definition)[0], row.found):
                cell += f" · {_cell(other, definition)}"
            cells.append(cell)
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def _cell(row: Row, definition: str) -> str:
    kept, share = row.by(definition)
    text = f"{kept}/{row.found}" + (f" ({share:.1%})" if share < 1 else "")
    return text if share >= GOAL else f"**{text}**"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--ledger-max-tokens", type=int, help="the ledger's cap (default: the config's)"
    )
    parser.add_argument(
        "--span",
        choices=("middle", "receipt", "both"),
        default="both",
        help="what counts as compacted: the summarized middle, or with the pruned outputs too",
    )
    parser.add_argument(
        "--markdown",
        action="store_true",
        help="a table per definition, both spans in each (docs/survival.md)",
    )
    args = parser.parse_args(argv)
    print(f"$ python -m benchmarks.survival {' '.join(argv or sys.argv[1:])}".rstrip())
    if args.markdown:
        middle, receipt = rows(args.ledger_max_tokens), rows(args.ledger_max_tokens, "receipt")
        for definition, meaning in DEFINITIONS.items():
            print(f"\n{definition}: {meaning}\n")
            print("\n".join(markdown(middle, receipt, definition)))
        return 0
    for span in ("middle", "receipt") if args.span == "both" else (args.span,):
        found = rows(args.ledger_max_tokens, span)
        for definition, meaning in DEFINITIONS.items():
            print(f"\nspan: {SPANS[span]}\ndefinition: {meaning}")
            print("\n".join(table(found, definition)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
