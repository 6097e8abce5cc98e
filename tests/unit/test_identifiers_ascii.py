"""The ASCII twins of the identifier patterns (``compaction/core/identifiers.py``): the scan
finds the same items, in the same order, as with the Unicode patterns alone."""

from __future__ import annotations

import random

import pytest

from compaction.core import identifiers

# ASCII and non-ASCII characters an id, a path or a value is made of, and the separators.
ALPHABET = [*"abcfXYZ0189_-./:@%~+()", "é", "→", "中", "$", "€", "\x1c", " ", "v"]


def corpus(seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    out = []
    for _ in range(400):
        texts = [
            "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 40)))
            for _ in range(rng.randint(1, 30))
        ]
        out.append(list(dict.fromkeys(word for text in texts for word in text.split())))
    return out


FIXED = [
    ["src/app.py", "/usr/lib/é/x.so", "deadbeef12", "v1.2.3", "$12.50", "café/menu/x.py"],
    ["a/b/c", "→/x/y.py", "ABC12", "growth_16", "0f3a9c1d-1111-2222-3333-444455556666"],
]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_same_items_as_the_unicode_patterns(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    cases = [*FIXED, *corpus(seed)]
    fast = [identifiers.scan(words) for words in cases]
    monkeypatch.setattr(identifiers, "_PATH_ASCII", identifiers._PATH)
    monkeypatch.setattr(identifiers, "_TOKEN_ASCII", identifiers._TOKEN)
    assert fast == [identifiers.scan(words) for words in cases]


def test_ascii_and_other_words_keep_their_order() -> None:
    found = identifiers.scan(["x/é/one.py", "a/b/two.py", "中/c/three.py", "d/e/four.py"])
    assert found["paths"] == ["x/é/one.py", "a/b/two.py", "中/c/three.py", "d/e/four.py"]
