"""Issue 24's scanning changes give the same output as before, on every shared transcript and
every shape of ``benchmarks.shapes`` (docs/benchmarks.md, "Against Hermes Agent")."""

from __future__ import annotations

import pytest

from benchmarks import shapes
from benchmarks.engine import TRANSCRIPTS, load_transcript
from compaction import Message
from compaction.core.ledger import extract
from compaction.core.redact import Secrets

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
