"""The estimates' fast paths (compaction/core/tokens.py): CJK counted on what is left of a mostly
ASCII text, and a compaction's output estimated from the counts its input had."""

from __future__ import annotations

import pytest

from compaction.core.messages import Message, ToolCall
from compaction.core.tokens import (
    count_cjk,
    estimate_messages_tokens,
    estimate_reusing,
    text_estimator,
)

CJK = text_estimator("cjk", 4)


@pytest.mark.parametrize(
    ("text", "cjk_chars"),
    [
        ('{"path": "/a/b.html", "text": "江苏足球 history"}', 4),  # mostly ASCII
        ("log 🚀 é \ud800 line 。" * 20, 20),  # emoji, accents, a lone surrogate
        ("江苏足球 ok", 4),  # mostly CJK
        ("\ud800\udfff 中", 1),
    ],
)
def test_cjk_counted_in_mixed_text(text: str, cjk_chars: int) -> None:
    assert count_cjk(text) == cjk_chars


def test_equals_a_fresh_estimate_when_the_counts_are_right() -> None:
    counted = [
        Message(role="user", content="你好 " * 50),
        Message(
            role="assistant",
            content="",
            tool_calls=[ToolCall(id="c1", name="write", arguments='{"text": "江苏 🚀"}')],
        ),
        Message(role="tool", content="ok", tool_call_id="c1"),
    ]
    new = Message(role="user", content="summary " * 30, is_summary=True)
    out = [counted[0], new, *counted[1:]]
    counts = [estimate_messages_tokens([m], CJK) for m in counted]
    assert estimate_reusing(out, counted, counts, CJK) == estimate_messages_tokens(out, CJK)


def test_takes_the_counts_of_the_same_objects_only() -> None:
    kept = Message(role="user", content="x" * 400)
    equal_but_new = Message(role="user", content="x" * 400)
    # A count that no estimate gives shows which messages were looked up, not estimated.
    assert estimate_reusing([kept], [kept], [7], CJK) == 7
    assert estimate_reusing([equal_but_new], [kept], [7], CJK) == 110
