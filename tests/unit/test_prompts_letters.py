"""detect_language's letter count (compaction/core/prompts.py): only ASCII letters count beside the
CJK characters, as the regex ``[A-Za-z]+`` counted them before the count moved to the UTF-8
bytes. The rest of language detection: test_prompts_language.py."""

from __future__ import annotations

import pytest

from compaction.core.prompts import detect_language
from tests.unit.builders import user


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("中aaaa", "zh"),  # 1 CJK of 5 letters: the 20% share
        ("中aaaaa", "en"),  # 1 of 6
        ("中" + "é" * 10, "zh"),  # accented letters are not ASCII letters: 1 of 1
        ("中" + "\u212a" * 10, "zh"),  # the Kelvin sign lower-cases to 'k', yet is none
        ("中 1234567890 ,.-_ \ud800", "zh"),  # digits, punctuation, a lone surrogate: none
        ("中\U0001f600" * 3 + "abcdefghijkl", "zh"),  # 3 of 15
        ("中\U0001f600" * 3 + "abcdefghijklm", "en"),  # 3 of 16
    ],
)
def test_only_ascii_letters_and_cjk_count(text: str, language: str) -> None:
    assert detect_language([user(text)]) == language
