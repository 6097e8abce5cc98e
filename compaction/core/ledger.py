"""The exact-identifier ledger (docs/architecture.md, "The algorithm").

LLM summaries paraphrase; an agent that resumes needs the exact path, command or error line.
The ledger lists them verbatim, taken from the original contents of the compacted turns (before
pruning), deduplicated, bounded by a token cap, and carried over from the previous summary.
Where they are found is ``compaction/core/identifiers.py``; here they are kept, written and read
back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from itertools import compress

from compaction.core.blocks import blocks
from compaction.core.identifiers import (
    MAX_ITEM_CHARS,
    commands,
    error_lines,
    prose_errors,
    scan,
)
from compaction.core.messages import Message
from compaction.core.picking import Picker
from compaction.core.redact import Rules, Secrets, redact_many, rules_for
from compaction.core.storable import storable
from compaction.core.tokens import TextEstimator
from compaction.core.turns import Turns

#: Kinds in priority order: the order they are listed in, and the order in which the token cap's
#: leftover is spent.
KINDS: tuple[str, ...] = ("errors", "commands", "paths", "urls", "ids", "values")
#: The most each kind present is sure of on the first pass, as a share of the cap (no more than
#: it needs): a kind with few items (a research agent's URLs beside thousands of paths) keeps
#: them all.
FLOOR_SHARE = 0.10
HEADINGS: dict[str, dict[str, str]] = {
    "en": {
        "title": "## Exact identifiers (verbatim from the compacted turns)",
        "errors": "### Errors",
        "commands": "### Commands",
        "paths": "### Files and paths",
        "urls": "### URLs",
        "ids": "### IDs",
        "values": "### Values",
        "overflow": "{count} more did not fit here: use recall to search the compacted messages.",
    },
    "zh": {
        "title": "## 原样保留的标识符（来自被压缩轮次的原文）",
        "errors": "### 错误",
        "commands": "### 命令",
        "paths": "### 文件与路径",
        "urls": "### 链接",
        "ids": "### 标识",
        "values": "### 数值",
        "overflow": "另有 {count} 项未能列出：使用 recall 搜索被压缩的消息。",
    },
}
_KIND_BY_HEADING = {
    h: kind for lang in HEADINGS.values() for kind, h in lang.items() if kind != "overflow"
}
TITLES = tuple(lang["title"] for lang in HEADINGS.values())

#: Kinds taken from whole lines, which may carry white space and carriage returns.
_LINE_KINDS = frozenset({"errors", "commands"})
#: Kinds of single words (no white space in any item): listed several to a line, separated by
#: spaces, which costs a character an item where a bullet of its own costs three; read back
#: by ``parse``.
PACKED = frozenset({"paths", "urls", "ids"})
#: The most characters of a packed line (it breaks before the item that would pass it).
LINE_CHARS = 100
#: Candidates estimated at once by ``_fits``.
_BATCH = 512
#: Kinds whose items may hold another's verbatim (a path holds its directory and ids).
HOLDERS = frozenset({"errors", "commands", "paths", "urls"})
#: The kinds ``picking.acted_on`` finds (``identifiers.scan``'s).
_ACTED_KINDS = frozenset({"paths", "urls", "ids", "values"})


@dataclass
class Ledger:
    """Items by kind, oldest first; ``dropped`` counts what the token cap left out, ``held``
    the items not listed because a listed item holds them verbatim (kept all the same)."""

    items: dict[str, list[str]] = field(default_factory=lambda: {k: [] for k in KINDS})
    dropped: int = 0
    held: int = 0

    def __len__(self) -> int:
        return sum(len(v) for v in self.items.values())

    def all_items(self) -> list[str]:
        return [item for kind in KINDS for item in self.items[kind]]


def _clip(text: str) -> str:
    # After a carriage return a terminal shows only what follows (progress bars).
    text = text.strip().rsplit("\r", 1)[-1].strip()
    return text if len(text) <= MAX_ITEM_CHARS else ""


def extract(
    messages: Sequence[Message] | Turns,
    words: Sequence[str] | None = None,
    rules: Rules | None = None,
    secrets: Secrets | None = None,
) -> dict[str, list[str]]:
    """Every candidate by kind, in order of first appearance, deduplicated, redacted.

    ``words`` is ``turns.distinct_words()`` and ``rules`` is ``rules_for`` those words, when
    the caller has them already. An item is judged alone, without the words around it in the
    turns: ``secrets`` (what redaction found in the turns, in context) are hidden in the items
    and the items that are pieces of one dropped."""
    turns = messages if isinstance(messages, Turns) else Turns.of(messages)
    found: dict[str, dict[str, None]] = {kind: {} for kind in KINDS}

    def add(kind: str, values: Iterable[str]) -> None:
        if found[kind]:
            found[kind].update(dict.fromkeys(values))  # a value keeps its first place
        else:  # the first values of a kind (the usual case): one dict made, none merged
            found[kind] = dict.fromkeys(values)

    # Arguments seen before (a command run again) give the same commands: decoded once.
    add("commands", commands({call.arguments: call for call in turns.calls}.values()))
    # One scan per block of text: per-message regex calls cost more than the scans.
    for block in blocks(turns.spoken):
        add("errors", error_lines("\n".join(block)))
    # The errors an agent names in its own account of them (where its turns keep them).
    for message in turns.messages:
        text = message.content
        if message.role == "assistant" and ("Error" in text or "Exception" in text):
            add("errors", prose_errors(text))
    for kind, values in scan(turns.distinct_words() if words is None else words).items():
        add(kind, values)
    # A URL is listed as a URL, not again as a path.
    if found["urls"]:
        urls = "\n".join(found["urls"])  # one C-level search per path (paths hold no newline)
        found["paths"] = {p: None for p in found["paths"] if p not in urls}
    # Clipped and redacted once per distinct item, not per occurrence.
    clipped: dict[str, list[str]] = {}
    for kind, bucket in found.items():
        if kind in _LINE_KINDS:
            # two lines can clip alike ("Error: x" and "  Error: x  ")
            clipped[kind] = [item for item in dict.fromkeys(map(_clip, bucket)) if item]
        elif max(map(len, bucket), default=0) <= MAX_ITEM_CHARS:  # the usual case: all fit
            clipped[kind] = list(bucket)
        else:  # parts of single words: nothing to strip
            clipped[kind] = [item for item in bucket if len(item) <= MAX_ITEM_CHARS]
    # The redaction rules chosen once, on every item of every kind (given: chosen on the words,
    # which hold every item, a command's words too: escaped arguments are read decoded,
    # ``compaction/core/arguments.py``); with none to run, the items stay as they are (distinct).
    if rules is None:
        rules = rules_for("\n".join(item for items in clipped.values() for item in items))
    if rules:
        clipped = {kind: redact_many(items, rules) for kind, items in clipped.items()}
    if secrets:
        clipped = {kind: secrets.outside(items) for kind, items in clipped.items()}
    if rules or secrets:  # two items redacted alike are one
        clipped = {kind: list(dict.fromkeys(items)) for kind, items in clipped.items()}
    return clipped


def shares(candidates: dict[str, list[str]], max_tokens: int) -> dict[str, int]:
    """Each present kind's first-pass allowance: a floor (what it needs, up to ``FLOOR_SHARE`` of
    the cap), and the rest of the cap in proportion to the kind's size, so that the cap is shared
    by what the span holds, not by fixed fractions (docs/architecture.md, "The algorithm")."""
    # Sizes in characters, plus 8 per item (the 2 tokens each costs beyond its text): a C-speed
    # sum, where estimating every item would cost a call per item (hundreds of thousands of ids
    # in a long middle). Only the proportions matter, a third of the characters is a generous
    # guess of a kind's need, and the second pass spends what these misjudge.
    sizes = {
        kind: sum(map(len, items)) + 8 * len(items) for kind, items in candidates.items() if items
    }
    total = sum(sizes.values())
    if not total:
        return {}
    floors = {kind: min(int(max_tokens * FLOOR_SHARE), size // 3) for kind, size in sizes.items()}
    rest = max(max_tokens - sum(floors.values()), 0)
    return {kind: floors[kind] + rest * size // total for kind, size in sizes.items()}


def _candidates(fresh: dict[str, list[str]], previous: Ledger | None) -> dict[str, list[str]]:
    """Per kind, carried-over then fresh items, distinct."""
    candidates: dict[str, list[str]] = {}
    for kind in KINDS:
        carried = dict.fromkeys(previous.items[kind] if previous else [])
        # A set test per fresh item, not one big merged dict: a 100,000-message middle gives
        # hundreds of thousands of ids.
        new = fresh.get(kind, [])
        candidates[kind] = [*carried, *(i for i in new if i not in carried)] if carried else [*new]
    return candidates


def _acted_last(pools: dict[str, list[str]], acted: AbstractSet[str]) -> None:
    """Move the items acted on to the end of their pools, where ``Picker.take`` starts (each
    part keeps its order: the newest first)."""
    for kind in _ACTED_KINDS if acted else ():
        first = [item in acted for item in pools[kind]]
        pools[kind] = [
            *compress(pools[kind], [not f for f in first]),
            *compress(pools[kind], first),
        ]


def _fits(pools: dict[str, list[str]], max_tokens: int, estimate_text: TextEstimator) -> bool:
    """Whether every candidate surely fits the cap: the estimate of them joined, plus what each
    costs beyond its text (``Picker.cost``: a bullet, a packed line's share). Estimated a batch
    at a time, stopping once past the cap: a long middle holds hundreds of thousands of ids."""
    spent = 0.0
    for kind in KINDS:
        pool, extra = pools[kind], (0 if kind in PACKED else 2)
        for at in range(0, len(pool), _BATCH):
            batch = pool[at : at + _BATCH]
            text = "\n".join(batch)
            spent += (estimate_text(text) + 1) * (1 + 2 / LINE_CHARS) + extra * len(batch)
            if spent > max_tokens:
                return False
    return True


def build(
    fresh: dict[str, list[str]],
    previous: Ledger | None,
    max_tokens: int,
    estimate_text: TextEstimator,
    acted: Callable[[], AbstractSet[str]] = frozenset,
) -> Ledger:
    """Merge carried-over and fresh items (distinct, as ``extract`` gives them): all of them when
    they fit the cap. Else the newest first, those ``acted`` gives (``picking.acted_on``, asked
    only then) before the others of their kind; an item that a listed one holds verbatim
    (``compaction/core/picking.py``) is not listed again: it counts as kept (``Ledger.held``),
    not as dropped."""
    pools = _candidates(fresh, previous)
    ledger = Ledger()
    if _fits(pools, max_tokens, estimate_text):
        ledger.items = pools
        return ledger
    _acted_last(pools, acted())
    picker = Picker(pools, KINDS, PACKED, HOLDERS, max_tokens, estimate_text, LINE_CHARS)
    for kind, allowance in shares(picker.pools, max_tokens).items():
        picker.take(kind, allowance)
    picker.fill()
    if picker.unlist_held():  # spend again what the items held elsewhere had taken
        picker.fill()
    for kind in KINDS:
        ledger.items[kind] = picker.chosen[kind][::-1]
    ledger.dropped, ledger.held = picker.left()
    return ledger


def overflow_line(count: int, language: str) -> str:
    """The ledger's last line when its cap left ``count`` identifiers out: one sentence that
    names the ``recall`` tool (docs/architecture.md, "The algorithm"). ``parse`` skips it (no
    ``- `` item)."""
    return HEADINGS.get(language, HEADINGS["en"])["overflow"].format(count=count)


def merged(first: dict[str, list[str]], then: dict[str, list[str]]) -> dict[str, list[str]]:
    """Two spans' candidates by kind, ``first``'s then the new ones of ``then``, each distinct
    (the summarized middle's, then the pruned outputs' after it)."""
    out = {}
    for kind in KINDS:
        seen = dict.fromkeys(first.get(kind, []))
        seen.update(dict.fromkeys(then.get(kind, [])))
        out[kind] = list(seen)
    return out


def render(ledger: Ledger, language: str) -> str:
    if not len(ledger):
        return ""
    headings = HEADINGS.get(language, HEADINGS["en"])
    lines = [headings["title"]]
    for kind in KINDS:
        if ledger.items[kind]:
            lines.append(headings[kind])
            lines.extend(_lines(kind, ledger.items[kind]))
    if ledger.dropped:  # the originals stay in the database: say how to reach them
        lines.append(overflow_line(ledger.dropped, language))
    # Decoded arguments (a \u0000 escape) and rows stored before the appends checked them
    # may hold what the database refuses.
    return storable("\n".join(lines))


def _lines(kind: str, items: list[str]) -> list[str]:
    """A kind's bullets: one item each, or for a ``PACKED`` kind as many as ``LINE_CHARS``
    allows."""
    if kind not in PACKED:
        return [f"- {item}" for item in items]
    lines: list[list[str]] = []
    width = LINE_CHARS
    for item in items:
        if width + 1 + len(item) > LINE_CHARS:
            lines.append([])
            width = -1
        lines[-1].append(item)
        width += 1 + len(item)
    return ["- " + " ".join(line) for line in lines]


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
            elif line.startswith("- ") and kind in PACKED:  # one item a line before issue 24
                ledger.items[kind].extend(line[2:].split())
            elif line.startswith("- ") and kind is not None:
                ledger.items[kind].append(line[2:])
        return body, ledger
    return summary, None
