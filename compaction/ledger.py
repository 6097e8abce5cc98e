"""The exact-identifier ledger (DESIGN §4).

LLM summaries paraphrase; an agent that resumes needs the exact path, command or error line.
The ledger lists them verbatim, taken from the original contents of the compacted turns (before
pruning), deduplicated, bounded by a token cap, and carried over from the previous summary.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate

from compaction.blocks import blocks
from compaction.messages import Message, ToolCall
from compaction.redact import Rules, combine, redact_many, rules_for
from compaction.tokens import TextEstimator
from compaction.turns import Turns

#: Kinds in priority order, each with its share of the token cap on the first pass.
KINDS: tuple[tuple[str, float], ...] = (
    ("errors", 0.30),
    ("commands", 0.25),
    ("paths", 0.25),
    ("urls", 0.08),
    ("ids", 0.08),
    ("values", 0.04),
)
HEADINGS: dict[str, dict[str, str]] = {
    "en": {
        "title": "## Exact identifiers (verbatim from the compacted turns)",
        "errors": "### Errors",
        "commands": "### Commands",
        "paths": "### Files and paths",
        "urls": "### URLs",
        "ids": "### IDs",
        "values": "### Values",
    },
    "zh": {
        "title": "## 原样保留的标识符（来自被压缩轮次的原文）",
        "errors": "### 错误",
        "commands": "### 命令",
        "paths": "### 文件与路径",
        "urls": "### 链接",
        "ids": "### 标识",
        "values": "### 数值",
    },
}
_KIND_BY_HEADING = {h: kind for lang in HEADINGS.values() for kind, h in lang.items()}
TITLES = tuple(lang["title"] for lang in HEADINGS.values())

MAX_ITEM_CHARS = 300
#: Kinds taken from whole lines, which may carry white space and carriage returns.
_LINE_KINDS = frozenset({"errors", "commands"})
_COMMAND_KEYS = ("command", "cmd", "script")

# Candidates are found on whitespace-separated words, pre-filtered by a cheap character test:
# regexes then run over the few words that can match instead of every position of the text.
# Stops at CJK punctuation: "见 https://x.org/a，然后" must not take the comma and what follows.
_URL = re.compile(r"https?://[^\s<>\"'`)\]}|\u3000-\u303f\uff00-\uffef]+")
_PATH = re.compile(r"(?<![\w:/.@%-])(?:~|\.{1,2})?/?(?:[\w.@+-]+/)+[\w.@+-]*[\w@+-]")
# Anchored on the extension's literal dot so the regex engine can skip ahead; the name in
# front of it is found by walking back (see ``_files``).
_FILE_EXT = re.compile(
    r"\.(?:py|pyi|js|jsx|ts|tsx|go|rs|rb|java|kt|c|h|cc|cpp|hpp|cs|php|ex|exs|erl|swift|scala"
    r"|sh|sql|json|ya?ml|toml|ini|cfg|md|rst|txt|html|css|lock|vue|proto|xml|csv|log|env)(?![\w-])"
)
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")
# One literal-led regex per hint: the engine jumps between occurrences of the literal, where one
# alternation would be tried at every position of the text (measured 3x slower).
_ERROR_HINTS = tuple(
    re.compile(hint)
    for hint in (
        "Traceback",
        r"Error\b",
        r"Exception\b",
        "FAILED",
        "rror:",
        "fatal:",
        "panic:",
        r"error\[",
    )
)
# str.strip with every printable ASCII non-digit leaves something only when a digit is inside:
# a C-speed test, unlike a regex search per word.
_NOT_DIGITS = "".join(chr(c) for c in range(32, 127) if not chr(c).isdigit())
# Ids and values in one pass (one regex beats five over the same text); the group name is
# the kind.
_TOKEN = re.compile(
    r"(?<![\w-])(?:(?P<uuid>[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12})"
    r"|(?P<hash>[0-9a-f]{7,40})|(?P<code>[A-Z0-9]{5,12})|(?P<snake>[a-z]+(?:_[a-z]+)*_\d{2,})"
    r"|(?P<version>v?\d+\.\d+\.\d+(?:[-.+]\w+)?))(?![\w-])"
    r"|(?P<money>[$€£¥]\s?\d[\d,]*(?:\.\d+)?)"
)
_MIXED_ONLY = frozenset({"hash", "code"})  # all digits or all letters: a count or a word


@dataclass
class Ledger:
    """Items by kind, oldest first; ``dropped`` counts what the token cap left out."""

    items: dict[str, list[str]] = field(default_factory=lambda: {k: [] for k, _ in KINDS})
    dropped: int = 0

    def __len__(self) -> int:
        return sum(len(v) for v in self.items.values())

    def all_items(self) -> list[str]:
        return [item for kind, _ in KINDS for item in self.items[kind]]


def _clip(text: str) -> str:
    # After a carriage return a terminal shows only what follows (progress bars).
    text = text.strip().rsplit("\r", 1)[-1].strip()
    return text if len(text) <= MAX_ITEM_CHARS else ""


def _commands(calls: Iterable[ToolCall]) -> Iterable[str]:
    for call in calls:
        arguments = call.arguments
        # _COMMAND_KEYS spelled out rather than any(...): this runs for every tool call.
        if not ("command" in arguments or "cmd" in arguments or "script" in arguments):
            continue
        try:
            args = json.loads(arguments)
        except ValueError:
            continue
        if not isinstance(args, dict):
            continue
        for key in _COMMAND_KEYS:
            value = args.get(key)
            if isinstance(value, list):
                value = " ".join(str(v) for v in value)
            if isinstance(value, str) and value.strip():
                # A multi-line script is remembered by its first line.
                yield value.strip().split("\n", 1)[0]


def _error_lines(text: str) -> Iterable[str]:
    """Every line holding an error hint, in text order."""
    starts = {
        text.rfind("\n", 0, match.start()) + 1
        for hint in _ERROR_HINTS
        for match in hint.finditer(text)
    }
    for start in sorted(starts):
        end = text.find("\n", start)
        yield text[start : end if end != -1 else len(text)]


def _files(dotted: str) -> Iterable[tuple[int, str]]:
    """Bare file names (``setup.py``) with their offsets; a name right after a ``/`` belongs to
    a path instead."""
    for match in _FILE_EXT.finditer(dotted):
        start = match.start()
        while start > 0 and dotted[start - 1] in _NAME_CHARS:
            start -= 1
        name = dotted[start : match.end()].lstrip(".")
        if name[: -len(match.group(0))] and (start == 0 or dotted[start - 1] not in "/\\"):
            yield start, name


def _paths(words: Sequence[str]) -> list[tuple[int, str]]:
    """Paths with their offsets in ``" ".join(words)``. A path holds a slash, so only the words
    with one are searched (a third of the text: the regex tries every position it is given)."""
    slashed = [i for i, word in enumerate(words) if "/" in word]
    text = " ".join(words[i] for i in slashed)
    # Word i starts at (length of the words before it) + i in a text joined with spaces.
    before = list(accumulate(map(len, words), initial=0))
    local = list(accumulate((len(words[i]) for i in slashed), initial=0))
    local_starts = [length + k for k, length in enumerate(local)]
    out = []
    for match in _PATH.finditer(text):
        path = match.group(0)
        if _is_path(path):
            k = bisect_right(local_starts, match.start()) - 1
            out.append((before[slashed[k]] + slashed[k] + match.start() - local_starts[k], path))
    return out


def _scan(distinct: Sequence[str]) -> dict[str, list[str]]:
    """Paths, URLs, ids and values of the distinct words, each kind in order of appearance (an
    item first appears in the first word that holds it)."""
    words = [w for w in distinct if not w.isalpha()]
    pathy_words = [w for w in words if "/" in w or "." in w]
    pathy = " ".join(pathy_words)
    found: dict[str, list[str]] = {"paths": [], "urls": [], "ids": [], "values": []}
    found["paths"] = [item for _, item in sorted([*_paths(pathy_words), *_files(pathy)])]
    found["urls"] = [u.rstrip(".,;:!?") for u in _URL.findall(pathy)]
    numbered = " ".join(w for w in words if w.strip(_NOT_DIGITS))
    for match in _TOKEN.finditer(numbered):
        kind, value = match.lastgroup or "", match.group(0)
        if kind in _MIXED_ONLY and (value.isdigit() or value.isalpha()):
            continue
        found["values" if kind in ("version", "money") else "ids"].append(value)
    return found


def _is_path(path: str) -> bool:
    last = path.rsplit("/", 1)[-1]
    return (path[0] in "/.~" or path.count("/") >= 2 or "." in last) and not path.replace(
        "/", ""
    ).replace(".", "").isdigit()


def extract(
    messages: Sequence[Message] | Turns,
    words: Sequence[str] | None = None,
    rules: Rules | None = None,
) -> dict[str, list[str]]:
    """Every candidate by kind, in order of first appearance, deduplicated, redacted.

    ``words`` is ``turns.distinct_words()`` and ``rules`` is ``rules_for`` those words, when
    the caller has them already."""
    turns = messages if isinstance(messages, Turns) else Turns.of(messages)
    found: dict[str, dict[str, None]] = {kind: {} for kind, _ in KINDS}

    def add(kind: str, values: Iterable[str]) -> None:
        found[kind].update(dict.fromkeys(values))  # a value keeps its first place

    add("commands", _commands(turns.calls))
    # One scan per block of text: per-message regex calls cost more than the scans.
    for block in blocks(turns.spoken):
        add("errors", _error_lines("\n".join(block)))
    for kind, values in _scan(turns.distinct_words() if words is None else words).items():
        add(kind, values)
    # A URL is listed as a URL, not again as a path.
    urls = "\n".join(found["urls"])  # one C-level search per path (paths hold no newline)
    found["paths"] = {p: None for p in found["paths"] if p not in urls}
    # Clipped and redacted once per distinct item, not per occurrence.
    clipped: dict[str, list[str]] = {}
    for kind, bucket in found.items():
        if kind in _LINE_KINDS:
            # two lines can clip alike ("Error: x" and "  Error: x  ")
            clipped[kind] = [item for item in dict.fromkeys(map(_clip, bucket)) if item]
        else:  # parts of single words: nothing to strip
            clipped[kind] = [item for item in bucket if len(item) <= MAX_ITEM_CHARS]
    # The redaction rules chosen once, on every item of every kind; with none to run, the
    # items stay as they are (already distinct).
    if rules is None:
        rules = rules_for("\n".join(item for items in clipped.values() for item in items))
    else:  # chosen on ``words``, which hold every item but the (JSON-decoded) commands
        rules = combine(rules, rules_for("\n".join(clipped["commands"])))
    if not rules:
        return clipped
    return {kind: list(dict.fromkeys(redact_many(items, rules))) for kind, items in clipped.items()}


def build(
    fresh: dict[str, list[str]],
    previous: Ledger | None,
    max_tokens: int,
    estimate_text: TextEstimator,
) -> Ledger:
    """Merge carried-over and fresh items (distinct, as ``extract`` gives them), newest kept
    first when the cap binds."""
    ledger = Ledger()
    candidates: dict[str, list[str]] = {}
    for kind, _ in KINDS:
        carried = dict.fromkeys(previous.items[kind] if previous else [])
        # A set test per fresh item, not one big merged dict: a 100,000-message middle gives
        # hundreds of thousands of ids.
        new = fresh.get(kind, [])
        candidates[kind] = [*carried, *(i for i in new if i not in carried)] if carried else [*new]
    chosen: dict[str, list[str]] = {kind: [] for kind, _ in KINDS}
    remaining = max_tokens

    def take(kind: str, allowance: int) -> int:
        spent = 0
        pool = candidates[kind]
        while pool:
            cost = estimate_text(pool[-1]) + 2
            if cost > allowance - spent:
                break
            chosen[kind].append(pool.pop())
            spent += cost
        return spent

    for kind, share in KINDS:
        remaining -= take(kind, int(max_tokens * share))
    for kind, _ in KINDS:  # leftovers go to the kinds in priority order
        remaining -= take(kind, remaining)
    for kind, _ in KINDS:
        ledger.items[kind] = chosen[kind][::-1]
        ledger.dropped += len(candidates[kind])
    return ledger


def render(ledger: Ledger, language: str) -> str:
    if not len(ledger):
        return ""
    headings = HEADINGS.get(language, HEADINGS["en"])
    lines = [headings["title"]]
    for kind, _ in KINDS:
        if ledger.items[kind]:
            lines.append(headings[kind])
            lines.extend(f"- {item}" for item in ledger.items[kind])
    return "\n".join(lines)


def parse(summary: str) -> tuple[str, Ledger | None]:
    """Split a stored summary into its body and its ledger (None when it has none)."""
    for title in TITLES:
        at = summary.find(title)
        if at == -1:
            continue
        body, section = summary[:at].rstrip(), summary[at + len(title) :]
        ledger, kind = Ledger(), None
        for line in section.splitlines():
            if line.startswith("### "):
                kind = _KIND_BY_HEADING.get(line.strip())
            elif line.startswith("- ") and kind is not None:
                ledger.items[kind].append(line[2:])
        return body, ledger
    return summary, None
