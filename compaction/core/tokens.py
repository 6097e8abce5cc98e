"""Token estimation (docs/architecture.md, "The algorithm").

Two estimators, chosen by setting:

- ``seed``: ``floor(len(text) / chars_per_token)``, exactly the seed's formula;
- ``cjk`` (the default): characters of CJK scripts count one token each, every other character
  ``1 / chars_per_token``. On ASCII text both give the same number.

Every message adds a fixed overhead of 10 tokens, plus its tool calls' arguments. Figures from
these functions are estimates: whatever reports them marks them ``estimated``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Literal

from compaction.core.messages import Message

EstimatorName = Literal["cjk", "seed"]
TextEstimator = Callable[[str], int]

MESSAGE_OVERHEAD_TOKENS = 10

# Han (with extensions), kana, hangul, CJK punctuation and full-width forms.
_CJK_RANGES = (
    "\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3100-\u312f\u3130-\u318f\u31a0-\u31ff"
    "\u3200-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\ufe30-\ufe4f"
    "\uff00-\uffef\U00020000-\U0003134f"
)
# Runs of everything else, deleted in one ``sub``: what is left is the CJK characters. Twice
# as fast as finding each CJK character (one match object and one string per character).
_OTHER_RUNS = re.compile(f"[^{_CJK_RANGES}]+")
_ASCII_BYTES = bytes(range(128))


def count_cjk(text: str) -> int:
    if text.isascii():  # the common case costs one C-level scan
        return 0
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) < 2 * len(text):
        # Mostly ASCII (code, JSON, logs with an emoji or a Chinese comment): the regex walks
        # only the other characters, cut out at C speed. In UTF-8 no ASCII byte is part of
        # another character, so what is left decodes.
        text = raw.translate(None, _ASCII_BYTES).decode("utf-8", "surrogatepass")
    return len(_OTHER_RUNS.sub("", text))


def text_estimator(name: EstimatorName = "cjk", chars_per_token: int = 4) -> TextEstimator:
    """The text-only estimator (no per-message overhead) for a setting."""
    if name == "seed":
        return lambda text: len(text) // chars_per_token

    def cjk(text: str) -> int:
        if text.isascii():  # no CJK: one call less for most texts (tens of thousands a run)
            return len(text) // chars_per_token
        cjk_chars = count_cjk(text)
        return cjk_chars + (len(text) - cjk_chars) // chars_per_token

    return cjk


_DEFAULT = text_estimator()


def estimate_tokens(message: Message, estimate_text: TextEstimator = _DEFAULT) -> int:
    """Seed formula: ``text(content) + 10 + sum(text(arguments))``."""
    total = estimate_text(message.content) + MESSAGE_OVERHEAD_TOKENS
    for call in message.tool_calls:
        total += estimate_text(call.arguments)
    return total


def estimate_messages_tokens(
    messages: Iterable[Message], estimate_text: TextEstimator = _DEFAULT
) -> int:
    """Sum over a conversation; linear in its total length."""
    return sum(estimate_tokens(message, estimate_text) for message in messages)


def estimate_reusing(
    messages: Iterable[Message],
    counted: Sequence[Message],
    counts: Sequence[int],
    estimate_text: TextEstimator = _DEFAULT,
) -> int:
    """``estimate_messages_tokens(messages)``, taking the estimate of each message that is one
    of ``counted`` (the same object) from ``counts``: a compaction's output is mostly messages
    its input estimates counted already, and counting CJK text is a pass over it."""
    known = {id(message): count for message, count in zip(counted, counts, strict=True)}
    return sum(
        known[key] if (key := id(message)) in known else estimate_tokens(message, estimate_text)
        for message in messages
    )
