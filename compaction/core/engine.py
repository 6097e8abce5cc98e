"""``compact()``: the four phases end to end (docs/architecture.md, "The algorithm").

Pure: the summarizer is passed in, nothing here touches a network, a database or a clock other
than ``time.perf_counter`` for the per-phase timings. Each phase is a function returning what
the next one reads, so ``compact()`` is the pipeline: measure, prune, cut, summarize, assemble.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from compaction.core.assembly import ORPHAN_RESULT, assemble
from compaction.core.boundaries import bounds_for, compactable, head_end, summarizable, token_counts
from compaction.core.config import CompactionConfig
from compaction.core.errors import (
    InvalidRequest,
    NothingToCompact,
)
from compaction.core.messages import Message
from compaction.core.pins import kept_in_middle
from compaction.core.prompts import Language, summary_language
from compaction.core.pruning import PLACEHOLDER, prune
from compaction.core.result import CompactionResult, PhaseClock, summary_fields
from compaction.core.summary import Summarizer, Summary, SummaryRequest, summarize
from compaction.core.system_prompt import leading_system_tokens, refuse_system_prompt
from compaction.core.tokens import estimate_reusing, estimate_tokens
from compaction.core.validate import ensure_valid

__all__ = ["CompactionResult", "Reason", "Summarizer", "SummaryRequest", "compact", "compactable"]

Reason = Literal["auto", "manual"]


def compact(
    messages: Iterable[Message],
    config: CompactionConfig | None = None,
    summarizer: Summarizer | None = None,
    previous_summary: str | None = None,
    *,
    reason: Reason = "auto",
    focus: str | None = None,
    counts: Sequence[int] | None = None,
) -> CompactionResult:
    """Compact a conversation (docs/architecture.md, "The algorithm").

    ``reason="auto"`` runs only at or above the threshold and stops after phase 1 when pruning
    alone gets under it; ``reason="manual"`` (``/compact``) always runs all four phases.
    ``counts``: each message's estimate under ``config`` (``boundaries.token_counts``), when
    the caller has them already. Raises a ``CompactionError`` subclass rather than returning a
    half-done result.
    """
    config = config or CompactionConfig()
    clock = PhaseClock()
    measured = _measure(list(messages), config, counts)
    if reason == "auto" and measured.tokens < config.threshold_tokens:
        tokens = measured.tokens
        return CompactionResult(
            measured.items, tokens, tokens, summarized=False, language=measured.language
        )
    head = _protected_head(measured.items, config)
    clock.lap("estimate")
    pruned = _prune(measured, head, config)
    clock.lap("prune")
    if reason == "auto" and pruned.tokens < config.threshold_tokens:
        return _pruned_only(measured, pruned, clock.timings)
    cut = _cut(measured, pruned, head, config, reason)
    if summarizer is None:
        raise InvalidRequest("compact() needs a summarizer to summarize the middle")
    clock.lap("boundaries")
    summary = summarize(
        cut.middle,
        config,
        summarizer,
        previous_summary=previous_summary,
        # What the summary replaces, as it was before phase 1 pruned it.
        middle_tokens=sum(measured.counts[i] for i in cut.summarized_at),
        language=measured.language,
        focus=focus,
        head=cut.kept_before,
        lap=clock.lap,
        pruned=[measured.items[i] for i in cut.pruned_at if i >= cut.end],
    )
    return _assemble(measured, cut, summary, config, clock)


@dataclass(frozen=True, slots=True)
class _Measured:
    """The validated input, each message's estimate, and the summary's language."""

    items: list[Message]
    counts: list[int]
    tokens: int
    language: Language


@dataclass(frozen=True, slots=True)
class _Pruned:
    """Phase 1: the list with old tool results replaced, the new estimates, and where."""

    items: list[Message]
    counts: list[int]
    at: list[int]

    @property
    def tokens(self) -> int:
        return sum(self.counts)


@dataclass(frozen=True, slots=True)
class _Cut:
    """Phase 2: the pruned list cut into ``items[:start]`` (head), the middle and
    ``items[end:]`` (tail); ``pruned_at`` are the pruned messages left outside the head;
    ``pinned`` the indices of the middle's pinned steps, kept verbatim before the summary
    (docs/algorithm.md, "Pins")."""

    items: list[Message]
    counts: list[int]
    start: int
    end: int
    pruned_at: list[int]
    pinned: frozenset[int] = frozenset()

    @property
    def head(self) -> list[Message]:
        return self.items[: self.start]

    @property
    def summarized_at(self) -> list[int]:
        """Indices of what the summary replaces: the middle but its pinned steps."""
        return [i for i in range(self.start, self.end) if i not in self.pinned]

    @property
    def middle(self) -> list[Message]:
        return [self.items[i] for i in self.summarized_at]

    @property
    def kept_before(self) -> list[Message]:
        """What stays before the summary: the head, then the middle's pinned steps in order."""
        return [*self.head, *(self.items[i] for i in sorted(self.pinned))]

    @property
    def tail(self) -> list[Message]:
        return self.items[self.end :]


def _measure(
    items: list[Message], config: CompactionConfig, given: Sequence[int] | None
) -> _Measured:
    """Validate and estimate (unless ``given``); a system prompt over the threshold is refused
    here."""
    ensure_valid(items, provider="openai")  # malformed input is refused, never "repaired"
    counts = checked_counts(items, config, given)
    language = summary_language(config.summary_language, items)
    system_tokens = leading_system_tokens(items, counts)
    refuse_system_prompt(system_tokens, config.threshold_tokens, language)
    return _Measured(items, counts, sum(counts), language)


def _protected_head(items: Sequence[Message], config: CompactionConfig) -> int:
    head = head_end(items, config.protect_first_n)
    if len(items) <= head:
        raise NothingToCompact(f"only {len(items)} messages, all in the protected head")
    return head


def _prune(measured: _Measured, head: int, config: CompactionConfig) -> _Pruned:
    items, at = prune(
        measured.items,
        measured.counts,
        head_end=head,
        budget=config.tail_token_budget,
        min_chars=config.prune_min_chars,
        placeholder=PLACEHOLDER[measured.language],
    )
    counts = list(measured.counts)
    if at:  # every pruned message is a tool result holding the same placeholder
        pruned_tokens = estimate_tokens(items[at[0]], config.estimator())
        for index in at:
            counts[index] = pruned_tokens
    return _Pruned(items, counts, at)


def _pruned_only(
    measured: _Measured, pruned: _Pruned, timings: dict[str, float]
) -> CompactionResult:
    return CompactionResult(
        pruned.items,
        measured.tokens,
        pruned.tokens,
        summarized=False,
        pruned_ids=_ids(measured.items, pruned.at),
        pruned_count=len(pruned.at),
        language=measured.language,
        timings=timings,
    )


def _cut(
    measured: _Measured, pruned: _Pruned, head: int, config: CompactionConfig, reason: Reason
) -> _Cut:
    """Phase 2; refuses a middle too small to summarize. ``/compact`` always compacts: when the
    tail budget covers the whole middle, the tail shrinks to its minimum (docs/architecture.md,
    "The algorithm", phase 2). A kept message alone over the threshold stays whole and the
    middle is summarized around it (docs/algorithm.md, "Bounds")."""
    items, counts, at = pruned.items, pruned.counts, pruned.at
    bounds = bounds_for(items, counts, config, tail_budget=config.tail_token_budget)
    if reason == "manual" and not summarizable(items[bounds.head_end : bounds.tail_start]):
        bounds = bounds_for(items, counts, config, tail_budget=0)
    start, end = bounds.head_end, bounds.tail_start
    if start > head:
        # The head grew past the last user message: what phase 1 pruned there is head now,
        # and the head is never changed.
        items = [*measured.items[:start], *items[start:]]
        counts = [*measured.counts[:start], *counts[start:]]
        at = [i for i in at if i >= start]
    pinned = frozenset(start + i for i in kept_in_middle(items[:start], items[start:end]))
    cut = _Cut(items, counts, start, end, at, pinned)
    if not summarizable(cut.middle):
        raise NothingToCompact(
            f"the middle between the protected head and the tail holds {len(cut.middle)} message(s)"
        )
    return cut


def _assemble(
    measured: _Measured, cut: _Cut, summary: Summary, config: CompactionConfig, clock: PhaseClock
) -> CompactionResult:
    """Phase 4: head, summary message and tail, orphans repaired."""
    message = Message(role="user", content=summary.text, is_summary=True)
    kept = cut.kept_before
    out = assemble(kept, message, cut.tail, ORPHAN_RESULT[measured.language])
    clock.lap("assemble")
    # What is kept is counted already; the summary and any orphan's placeholder not.
    tokens_after = estimate_reusing(out, cut.items, cut.counts, config.estimator())
    middle = cut.middle
    return CompactionResult(
        out,
        measured.tokens,
        tokens_after,
        summarized=True,
        compressed_ids=[m.id for m in middle if m.id is not None],
        removed_count=len(middle),
        kept_ids=_ids(cut.items, sorted(cut.pinned)),
        pruned_ids=_ids(measured.items, cut.pruned_at),
        pruned_count=len(cut.pruned_at),
        language=measured.language,
        middle=(cut.start, cut.end),
        **summary_fields(summary, message),
        timings=clock.timings,
    )


def checked_counts(
    items: Sequence[Message], config: CompactionConfig, given: Sequence[int] | None
) -> list[int]:
    """Each message's estimate: ``given`` (the caller's, checked for length), else counted."""
    if given is not None and len(given) != len(items):
        raise InvalidRequest(f"{len(given)} token counts given for {len(items)} messages")
    return token_counts(items, config) if given is None else list(given)


def _ids(messages: Sequence[Message], indices: Iterable[int]) -> list[int]:
    """The stored ids of ``messages[i]`` for each index (messages not stored have none)."""
    return [i for i in (messages[k].id for k in indices) if i is not None]
