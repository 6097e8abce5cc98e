"""The two stages of a compaction, in order (docs/architecture.md, "The algorithm", "Two
segments"): the history first (``compact()``: the turns before the latest request); the loop
(``compact_loop()``: the older steps of the current task's tool loop) only when the history
alone could not bring the session under its threshold, or had nothing to compact.

The worker runs the stages itself, writing and announcing each one; ``first_stage`` and
``loop_follows`` are the rules it asks, so that it and ``compact_staged`` (the whole thing in
memory, for tests, benchmarks and the demo) cannot disagree.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from compaction.core.boundaries import history_compactable, loop_compactable, token_counts
from compaction.core.config import CompactionConfig
from compaction.core.contract import Stage
from compaction.core.engine import CompactionResult, Reason, compact
from compaction.core.loop import LoopResult, compact_loop
from compaction.core.messages import Message
from compaction.core.summary import Summarizer

__all__ = ["Staged", "compact_staged", "first_stage", "loop_follows", "loop_stage"]


@dataclass(frozen=True, slots=True)
class Staged:
    """What each stage did; ``None`` for a stage that did not run."""

    history: CompactionResult | None
    loop: LoopResult | None

    @property
    def last(self) -> CompactionResult:
        result = self.loop or self.history
        assert result is not None, "a Staged result holds at least one stage"
        return result

    @property
    def messages(self) -> list[Message]:
        return self.last.messages

    @property
    def tokens_before(self) -> int:
        return (self.history or self.last).tokens_before

    @property
    def tokens_after(self) -> int:
        return self.last.tokens_after


def first_stage(
    messages: Sequence[Message], config: CompactionConfig, counts: Sequence[int] | None = None
) -> Stage | None:
    """The stage a run starts with: the history when it has something to summarize, else the
    loop when it has; ``None`` when neither has (``nothing_to_compact``: not ``compactable``).
    ``counts`` (``token_counts``) when the caller has them already: the worker estimates each
    message once per run."""
    counts = token_counts(messages, config) if counts is None else counts
    if history_compactable(messages, counts, config):
        return "history"
    head = config.protect_first_n
    return "loop" if loop_compactable(messages, counts, protect_first_n=head) else None


def loop_follows(history: CompactionResult, config: CompactionConfig) -> bool:
    """After the history stage: whether the loop stage runs too (still at or over the threshold,
    and the loop has older steps to summarize beyond what the tail budget keeps, as the loop
    stage will count them)."""
    return _loop_counts(history, config) is not None


def _loop_counts(history: CompactionResult, config: CompactionConfig) -> list[int] | None:
    """``loop_follows``, answered with the history's output estimates (the loop stage's input)
    when it does; the estimates are made only past the threshold."""
    if history.tokens_after < config.threshold_tokens:
        return None
    counts = token_counts(history.messages, config)
    follows = loop_compactable(
        history.messages,
        counts,
        protect_first_n=config.protect_first_n,
        budget=config.tail_token_budget,
    )
    return counts if follows else None


def loop_stage(
    messages: Iterable[Message],
    config: CompactionConfig,
    summarizer: Summarizer,
    *,
    reason: Reason,
    focus: str | None,
    history: CompactionResult | None,
    counts: Sequence[int] | None = None,
) -> LoopResult:
    """The loop stage of a request, after ``history`` (``None``: the history had nothing).
    ``/compact`` forces it only when the history had nothing to give; after the history stage
    it runs, like an automatic one, only at or over the threshold. ``counts``: the messages'
    estimates (``token_counts``) when the caller has them."""
    return compact_loop(
        messages,
        config,
        summarizer,
        reason=reason if history is None else "auto",
        focus=focus,
        language=history.language if history is not None else None,
        counts=counts,
    )


def compact_staged(
    messages: Iterable[Message],
    config: CompactionConfig,
    summarizer: Summarizer,
    *,
    reason: Reason = "auto",
    focus: str | None = None,
) -> Staged:
    """Both stages in memory, as the worker runs them. Raises what ``compact()`` and
    ``compact_loop()`` raise (``NothingToCompact`` when neither segment has anything)."""
    items = list(messages)
    counts = token_counts(items, config)  # once for the rules and the stage
    history = None
    if first_stage(items, config, counts) == "history":
        history = compact(items, config, summarizer, reason=reason, focus=focus, counts=counts)
        loop_counts = _loop_counts(history, config)
        if loop_counts is None:
            return Staged(history, None)
        items, counts = history.messages, loop_counts
    loop = loop_stage(
        items, config, summarizer, reason=reason, focus=focus, history=history, counts=counts
    )
    return Staged(history, loop)
