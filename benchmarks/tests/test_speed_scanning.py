"""Issue 24's scanning changes give the same output as before, on every shared transcript and
every shape of ``benchmarks.shapes`` (docs/benchmarks.md, "Against Hermes Agent"): the
secrets searched in the items joined, the words the id regex skips, the redaction rules chosen
without the text near a lone gate word, the path regex led by the character before a path, a
UUID tried after a hash or code."""

from __future__ import annotations

import re

import pytest

from benchmarks import shapes
from benchmarks.engine import TRANSCRIPTS, load_transcript
from compaction import Message
from compaction.core.identifiers import _PATH, _TOKEN, _TOKEN_ASCII, _is_path, _paths, _tokened
from compaction.core.ledger import extract
from compaction.core.redact import _GATES, Secrets, rules_for
from compaction.core.turns import Turns

NAMES = [path.stem for path in sorted(TRANSCRIPTS.glob("*.json"))] + sorted(shapes.SHAPES)


def conversation(name: str) -> list[Message]:
    return shapes.generate(name) if name in shapes.SHAPES else load_transcript(name)


def outside_before(secrets: Secrets, items: list[str]) -> list[str]:
    """``Secrets.outside`` as it was: every secret searched in every item."""
    if not secrets.values:
        return list(items)
    return [secrets.hide(item) for item in items if item not in secrets._joined]


@pytest.mark.parametrize("name", NAMES)
def test_outside_gives_what_it_gave_before(name: str) -> None:
    found = extract(conversation(name))
    items = [item for kind in found.values() for item in kind]
    assert items
    # Secrets that are items, pieces of items (hidden inside longer ones) and absent ones.
    planted = [*items[::97][:5], *(item[1:-1] for item in items[::61][:5] if len(item) > 8)]
    for values in (planted, ["absent-secret-value-000"], []):
        secrets = Secrets(values)
        assert secrets.outside(items) == outside_before(secrets, items)
    hidden = Secrets(planted).outside(items)
    assert len(hidden) < len(items) or any("[REDACTED]" in item for item in hidden)


def tokens_of(words: list[str]) -> list[tuple[str, ...]]:
    """What ``_TOKEN`` finds in ``words`` joined as ``scan`` joins them."""
    searched = " " + " ".join(words)
    return (_TOKEN_ASCII if searched.isascii() else _TOKEN).findall(searched)


# Words beside which a dropped word would change what the regex finds: an amount running on
# from its sign's word, UUIDs in mixed case, codes, hashes, versions, snake_case ids.
EDGES = [
    ["x=€", "1,000.50", "n(12)", "a1$", "7", "12→", "£", "3,000"],
    ["aBcDeF12-aBcD-aBcD-aBcD-aBcDeFaBcDeF", "ABC12", "deadbee1", "name(12)", "v1.2.3"],
    ["run_12", "x(1)", "¥", "5", "2,508", "ab12cd3"],
]


@pytest.mark.parametrize("name", [*NAMES, *(f"edge {i}" for i in range(len(EDGES)))])
def test_words_left_out_hold_no_token(name: str) -> None:
    if name.startswith("edge"):
        words = EDGES[int(name.split()[1])]
    else:
        words = Turns.of(conversation(name)).distinct_words()
    numbered = [word for word in words if any(not c.isascii() or c.isdigit() for c in word)]
    kept = _tokened(numbered)
    assert len(kept) <= len(numbered)
    assert tokens_of(kept) == tokens_of(numbered)


def rules_plainly(text: str) -> list[object]:
    """``rules_for`` by its definition: every rule whose literal the text holds, in the order of
    the gate words' families."""
    return [
        rule
        for family in _GATES.values()
        for rules in family.values()
        for rule in rules
        if rule.literal in text
    ]


RULE_EDGES = [
    "SK-abc sk_live_ BEARER Bearer x://y -----begin -----BEGIN",
    "github ghp_x AIZA AIza curl CURL api_key API_KEY token Token eyJ EYJ",
    "nothing to see here",
]


@pytest.mark.parametrize("name", [*NAMES, *(f"edge {i}" for i in range(len(RULE_EDGES)))])
def test_rules_chosen_are_those_whose_literal_is_there(name: str) -> None:
    if name.startswith("edge"):
        text = RULE_EDGES[int(name.split()[1])]
    else:
        turns = Turns.of(conversation(name))
        text = " ".join([*turns.distinct_words(), *(call.name for call in turns.calls)])
    assert list(rules_for(text)) == rules_plainly(text)


PATH_EDGES = [
    "a/b+~/c/d x/y+/z ./q/r+.s/t",
    "src/a.py:12 (see /usr/lib/x.so) https://x.org/?f=src/b.py",
]


@pytest.mark.parametrize("name", [*NAMES, *(f"edge {i}" for i in range(len(PATH_EDGES)))])
def test_paths_led_by_the_character_before_them(name: str) -> None:
    if name.startswith("edge"):
        words = PATH_EDGES[int(name.split()[1])].split()
    else:
        words = Turns.of(conversation(name)).distinct_words()
    text = " ".join(words)
    plainly = [(m.start(), m.group(0)) for m in _PATH.finditer(text) if _is_path(m.group(0))]
    assert sorted(_paths(words)) == sorted(plainly)


# ``_TOKEN`` as it was, a UUID tried before a hash or code.
UUID_FIRST = re.compile(
    r"([^\w-])(?:(?<=[$€£¥])(\s?\d[\d,]*(?:\.\d+)?)"
    r"|(?=[0-9a-zA-Z])(?:([0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}"
    r"|[0-9a-f]{7,40}+|[A-Z0-9]{5,12}+|[a-z]++(?:_[a-z]++)*+_\d{2,})"
    r"|(v?\d++\.\d++\.\d++(?:[-.+]\w++)?))(?![\w-]))"
)
UUID_EDGES = [
    "123e4567-e89b-12d3-a456-426614174000 123E4567-E89B-12D3-A456-426614174000",
    "aBcDeF12-aBcD-aBcD-aBcD-aBcDeFaBcDeF deadbeef-x 12345678-1234 ABCDEF12-ab",
    "123e4567-e89b-12d3-a456-4266141740001 " + "a1" * 25 + " AB12CD34EF56GH 9f8e7d6",
]


@pytest.mark.parametrize("name", [*NAMES, *(f"edge {i}" for i in range(len(UUID_EDGES)))])
def test_uuid_tried_last_finds_what_it_found_first(name: str) -> None:
    if name.startswith("edge"):
        searched = " " + UUID_EDGES[int(name.split()[1])]
    else:
        searched = " " + " ".join(Turns.of(conversation(name)).distinct_words())
    assert _TOKEN.findall(searched) == UUID_FIRST.findall(searched)
