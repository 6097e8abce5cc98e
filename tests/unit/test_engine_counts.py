"""``counts``: a caller that estimated the messages already passes the estimates to
``compact()`` and ``compact_loop()`` (compaction/core/engine.py, compaction/core/loop.py), and gets
the same result as when they count them."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from compaction import InvalidRequest, compact, compact_loop
from compaction.core.boundaries import token_counts
from compaction.core.config import CompactionConfig
from tests.fakes import FakeSummarizer, load_transcript

CONFIG = CompactionConfig(context_window=40_000, protect_first_n=1)


def test_history_stage_with_the_callers_counts_is_the_same() -> None:
    messages = load_transcript("openhands_ponyc-4588")
    counts = token_counts(messages, CONFIG)
    counted = compact(messages, CONFIG, FakeSummarizer(), reason="manual")
    given = compact(messages, CONFIG, FakeSummarizer(), reason="manual", counts=counts)
    assert given.messages == counted.messages
    assert (given.tokens_before, given.tokens_after) == (
        counted.tokens_before,
        counted.tokens_after,
    )


def test_loop_stage_with_the_callers_counts_is_the_same() -> None:
    messages = load_transcript("msa_deepseek-chat_pydicom-1139")
    counts = token_counts(messages, CONFIG)
    counted = compact_loop(messages, CONFIG, FakeSummarizer(), reason="manual")
    given = compact_loop(messages, CONFIG, FakeSummarizer(), reason="manual", counts=counts)
    assert given.messages == counted.messages
    assert (given.tokens_before, given.tokens_after) == (
        counted.tokens_before,
        counted.tokens_after,
    )


def test_the_counts_are_what_the_figures_are_made_of() -> None:
    messages = load_transcript("openhands_ponyc-4588")
    doubled = [2 * c for c in token_counts(messages, CONFIG)]
    result = compact(messages, CONFIG, FakeSummarizer(), reason="manual", counts=doubled)
    assert result.tokens_before == sum(doubled)


@pytest.mark.parametrize("stage", [compact, compact_loop])
def test_counts_of_another_length_are_refused(stage: Callable[..., object]) -> None:
    messages = load_transcript("msa_deepseek-chat_pydicom-1139")
    counts = token_counts(messages, CONFIG)[:-1]
    with pytest.raises(InvalidRequest, match="token counts given"):
        stage(messages, CONFIG, FakeSummarizer(), reason="manual", counts=counts)
