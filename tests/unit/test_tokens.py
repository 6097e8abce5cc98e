"""Token estimation (compaction/core/tokens.py; docs/architecture.md, "The algorithm")."""

from __future__ import annotations

import pytest

from compaction import estimate_messages_tokens as public_estimate_messages_tokens
from compaction import estimate_tokens as public_estimate_tokens
from compaction.core.tokens import (
    MESSAGE_OVERHEAD_TOKENS,
    TextEstimator,
    count_cjk,
    estimate_messages_tokens,
    estimate_tokens,
    text_estimator,
)
from tests.unit.builders import assistant, call, tool, user

SEED = text_estimator("seed")
CJK = text_estimator("cjk")
ESTIMATORS = pytest.mark.parametrize("estimator", [SEED, CJK], ids=["seed", "cjk"])


class Counting:
    """A text estimator that records every text it is asked about."""

    def __init__(self, inner: TextEstimator) -> None:
        self.inner = inner
        self.calls = 0
        self.chars = 0

    def __call__(self, text: str) -> int:
        self.calls += 1
        self.chars += len(text)
        return self.inner(text)


# --------------------------------------------------------------------------- seed formula


def test_overhead_is_ten() -> None:
    assert MESSAGE_OVERHEAD_TOKENS == 10


@pytest.mark.parametrize(
    ("length", "expected"),
    [(0, 10), (1, 10), (3, 10), (4, 11), (5, 11), (7, 11), (8, 12), (400, 110), (401, 110)],
)
@ESTIMATORS
def test_seed_formula_boundaries(estimator: TextEstimator, length: int, expected: int) -> None:
    assert estimate_tokens(user("x" * length), estimator) == expected


def test_default_estimator_is_used_without_argument() -> None:
    assert estimate_tokens(user("")) == 10
    assert estimate_tokens(user("abcd")) == 11
    assert estimate_tokens(user("你好世界")) == 14  # the default is the CJK-aware one


def test_public_names_are_the_same_functions() -> None:
    assert public_estimate_tokens is estimate_tokens
    assert public_estimate_messages_tokens is estimate_messages_tokens


@ESTIMATORS
def test_tool_call_arguments_add_floor_each(estimator: TextEstimator) -> None:
    message = assistant(
        "abcd",  # 1
        call("x" * 7, id_="c1"),  # 1
        call("x" * 8, id_="c2"),  # 2
        call("x" * 3, id_="c3"),  # 0
        call("", id_="c4"),  # 0
    )
    # floor per call (1 + 2 + 0 + 0), not floor of the sum (18 // 4 == 4)
    assert estimate_tokens(message, estimator) == 1 + 10 + 1 + 2 + 0 + 0


def test_tool_call_name_and_id_are_not_counted() -> None:
    short = assistant("", call("abcdefgh", "f", "c"))
    long = assistant("", call("abcdefgh", "f" * 100, "c" * 100))
    assert estimate_tokens(short) == estimate_tokens(long) == 12


def test_pruned_message_counts_its_placeholder_not_the_original() -> None:
    pruned = tool("x" * 8, "c1").with_content("x" * 8, original="y" * 4000)
    assert estimate_tokens(pruned) == 12


# --------------------------------------------------------------------------- seed vs cjk


@pytest.mark.parametrize(
    "text",
    [
        "",
        "a",
        "hello world",
        "def f(x):\n    return x * 2\n",
        '{"path": "/home/user/project/main.py", "line": 42}',
        "x" * 4001,
    ],
)
def test_seed_and_cjk_agree_on_ascii(text: str) -> None:
    assert SEED(text) == CJK(text) == len(text) // 4
    assert estimate_tokens(user(text), SEED) == estimate_tokens(user(text), CJK)


def test_cjk_chars_count_one_token_each() -> None:
    message = user("你好世界")
    assert estimate_tokens(message, CJK) == 4 + 10
    assert estimate_tokens(message, SEED) == 1 + 10


def test_mixed_text() -> None:
    text = "hello 世界 and 再见 ok"  # 4 CJK chars, 14 other chars
    assert count_cjk(text) == 4
    assert CJK(text) == 4 + 14 // 4
    assert SEED(text) == len(text) // 4 == 18 // 4


def test_cjk_tool_call_arguments() -> None:
    message = assistant("", call('{"q": "天气预报"}', id_="c1"))  # 4 CJK + 9 other
    assert estimate_tokens(message, CJK) == 10 + 4 + 9 // 4
    assert estimate_tokens(message, SEED) == 10 + 13 // 4


@pytest.mark.parametrize(
    ("text", "cjk_chars"),
    [
        ("こんにちは", 5),  # hiragana
        ("カタカナ", 4),  # katakana
        ("안녕하세요", 5),  # hangul syllables
        ("ㄱㄴㄷ", 3),  # hangul compatibility jamo
        ("。、「」", 4),  # CJK punctuation
        ("ＡＢＣ１２３", 6),  # full-width forms
        ("\U00020000\U0002a6d6", 2),  # CJK extension B (outside the BMP)
        ("漢字かなカナ한글", 8),
    ],
)
def test_kana_hangul_and_cjk_forms_count_as_cjk(text: str, cjk_chars: int) -> None:
    assert count_cjk(text) == cjk_chars
    assert CJK(text) == cjk_chars


@pytest.mark.parametrize("text", ["café résumé naïve", "привет мир", "αβγδ", "😀😀😀😀"])
def test_other_non_ascii_is_not_cjk(text: str) -> None:
    assert count_cjk(text) == 0
    assert CJK(text) == len(text) // 4 == SEED(text)


def test_count_cjk_ascii_is_zero() -> None:
    assert count_cjk("") == 0
    assert count_cjk("plain ascii text " * 10) == 0
    assert count_cjk("a你b") == 1


# --------------------------------------------------------------------------- chars_per_token


def test_chars_per_token_honoured_by_seed() -> None:
    three = text_estimator("seed", 3)
    assert three("ab") == 0
    assert three("abc") == 1
    assert three("abcdef") == 2
    assert three("abcdefg") == 2
    assert three("你好世界") == 1  # the seed estimator knows nothing of CJK
    assert estimate_tokens(user("abcdef"), three) == 12


def test_chars_per_token_honoured_by_cjk() -> None:
    three = text_estimator("cjk", 3)
    assert three("abcdef") == 2
    assert three("你好世界abc") == 4 + 1
    assert text_estimator("cjk", 1)("abc你") == 4


# --------------------------------------------------------------------------- conversations


def test_messages_tokens_is_the_sum() -> None:
    messages = [
        user("abcd"),
        assistant("", call("x" * 8, id_="c1"), call("y" * 12, id_="c2")),
        tool("z" * 40, "c1"),
        tool("你好", "c2"),
        assistant("done"),
    ]
    expected = sum(estimate_tokens(m) for m in messages)
    assert estimate_messages_tokens(messages) == expected == 11 + 15 + 20 + 12 + 11
    assert estimate_messages_tokens(messages, SEED) == sum(
        estimate_tokens(m, SEED) for m in messages
    )


def test_messages_tokens_of_nothing_is_zero() -> None:
    assert estimate_messages_tokens([]) == 0


def test_messages_tokens_accepts_an_iterator() -> None:
    messages = [user("abcd"), assistant("abcdefgh")]
    assert estimate_messages_tokens(iter(messages)) == 11 + 12


def test_linear_one_estimate_per_text() -> None:
    """5,000 messages: the text estimator runs exactly once per content and once per tool call
    argument; nothing is re-estimated as the conversation grows."""
    messages = []
    tool_call_count = 0
    for index in range(5_000):
        if index % 5 == 1:
            calls = [call(f'{{"n": {k}}}', id_=f"c{index}-{k}") for k in range(index % 3 + 1)]
            tool_call_count += len(calls)
            messages.append(assistant(f"step {index}", *calls))
        else:
            messages.append(user(f"message {index} " + "x" * (index % 50)))
    counter = Counting(CJK)
    total = estimate_messages_tokens(messages, counter)
    assert counter.calls == len(messages) + tool_call_count
    assert counter.chars == sum(
        len(m.content) + sum(len(c.arguments) for c in m.tool_calls) for m in messages
    )
    assert total == estimate_messages_tokens(messages, CJK)
