"""The loop stage: the older steps of the current task's tool loop summarized into one execution
summary (docs/architecture.md, "The algorithm").

The loop is what follows the latest real user request: assistant steps (an assistant message
and the results of its tool calls). ``compact()`` keeps that request and, usually, everything
after it; an agent that runs hundreds of steps on one request stays over its budget however
short the history gets. ``compact_loop`` summarizes the loop's older steps instead, keeping the
request and the most recent steps verbatim and every step whole. An execution summary already
at the start of the loop is folded into the new one (its text is the previous summary, its
turns are never read again), so the loop has at most one.

Pure like the engine: the summarizer is passed in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from compaction.core.assembly import ORPHAN_RESULT, assemble
from compaction.core.boundaries import RECENT_STEPS, loop_bounds, summarizable
from compaction.core.config import CompactionConfig
from compaction.core.engine import CompactionResult, Reason, checked_counts
from compaction.core.errors import NothingToCompact
from compaction.core.messages import Message
from compaction.core.pins import kept_in_middle
from compaction.core.prompts import Language, summary_language
from compaction.core.prompts_loop import LOOP, is_loop_summary
from compaction.core.result import PhaseClock, summary_fields
from compaction.core.summary import Summarizer, summarize
from compaction.core.tokens import estimate_reusing
from compaction.core.validate import ensure_valid

__all__ = ["RECENT_STEPS", "LoopResult", "compact_loop", "is_loop_summary"]


@dataclass
class LoopResult(CompactionResult):
    """A ``CompactionResult`` whose ``middle`` is the loop's older part (from just after the
    request); ``summary_message`` is the execution summary placed there."""

    #: assistant steps kept verbatim after the summary
    recent_steps: int = 0
    #: whether an earlier execution summary was folded into this one
    folded_previous: bool = False


def compact_loop(
    messages: Iterable[Message],
    config: CompactionConfig,
    summarizer: Summarizer,
    *,
    keep_recent_steps: int = RECENT_STEPS,
    previous_loop_summary: str | None = None,
    language: Language | None = None,
    reason: Reason = "auto",
    focus: str | None = None,
    counts: Sequence[int] | None = None,
) -> LoopResult:
    """Summarize the loop's older steps when ``messages`` are at or over the threshold (or
    ``reason="manual"``); under it, return them unchanged (``summarized=False``). At least
    ``keep_recent_steps`` recent steps are kept, more while they fit the tail budget; the
    stored ``previous_loop_summary`` wins over one found at the start of the loop; ``counts``
    are the messages' estimates when the caller has them. Raises ``NothingToCompact`` (no older
    part). A kept message alone over the threshold (the request, a recent step) stays whole and
    the older steps are summarized around it (docs/algorithm.md, "Bounds")."""
    clock = PhaseClock()
    items = list(messages)
    ensure_valid(items, provider="openai")  # malformed input is refused, never "repaired"
    estimate = config.estimator()
    counts = checked_counts(items, config, counts)
    tokens = sum(counts)
    language = language or summary_language(config.summary_language, items)
    if reason == "auto" and tokens < config.threshold_tokens:
        return LoopResult(items, tokens, tokens, summarized=False, language=language)
    clock.lap("estimate")
    start, end, steps = _bounds(items, counts, config, keep_recent_steps, reason)
    # Pinned steps of the older part stay verbatim before the summary (docs/algorithm.md, "Pins").
    pinned = {start + i for i in kept_in_middle(items[:start], items[start:end])}
    middle = [items[i] for i in range(start, end) if i not in pinned]
    before = [*items[:start], *(items[i] for i in sorted(pinned))]
    clock.lap("boundaries")
    summary = summarize(
        middle,
        config,
        summarizer,
        previous_summary=previous_loop_summary,
        middle_tokens=sum(counts[start:end]) - sum(counts[i] for i in pinned),
        language=language,
        focus=focus,
        head=before,
        lap=clock.lap,
        prompts=LOOP,
    )
    out, message = _assembled(before, items[end:], summary.text, language)
    clock.lap("assemble")
    return LoopResult(
        out,
        tokens,
        # what stays around the summary is counted already
        estimate_reusing(out, items, counts, estimate),
        summarized=True,
        compressed_ids=[m.id for m in middle if m.id is not None],
        removed_count=len(middle),
        kept_ids=[i for i in (items[k].id for k in sorted(pinned)) if i is not None],
        language=language,
        middle=(start, end),
        **summary_fields(summary, message),
        recent_steps=steps,
        folded_previous=previous_loop_summary is not None or middle[0].is_summary,
        timings=clock.timings,
    )


def _assembled(
    before: Sequence[Message], after: Sequence[Message], text: str, language: Language
) -> tuple[list[Message], Message]:
    """The loop with its older part replaced by the execution summary (its pinned steps kept
    before it), checked valid."""
    message = Message(role="user", content=text, is_summary=True)
    out = assemble(before, message, after, ORPHAN_RESULT[language])
    ensure_valid(out, provider="openai")
    return out, message


def _bounds(
    items: Sequence[Message],
    counts: Sequence[int],
    config: CompactionConfig,
    keep: int,
    reason: Reason,
) -> tuple[int, int, int]:
    """``(start, end, steps)``: ``items[start:end]`` is the loop's older part, ``items[end:]``
    the ``steps`` recent steps kept verbatim. ``/compact`` always compacts: when the tail budget
    holds the whole loop, only ``keep`` steps stay."""
    head = config.protect_first_n
    bounds = loop_bounds(
        items, counts, budget=config.tail_token_budget, keep=keep, protect_first_n=head
    )
    if bounds is None:
        raise NothingToCompact("no user request: the loop is what follows the latest one")
    if reason == "manual" and not summarizable(items[bounds.start : bounds.end]):
        bounds = loop_bounds(items, counts, budget=0, keep=keep, protect_first_n=head) or bounds
    start, end, steps = bounds.start, bounds.end, bounds.steps
    if not summarizable(items[start:end]):
        raise NothingToCompact(
            f"the loop before its {steps} most recent step(s) holds {end - start} message(s)"
        )
    return start, end, steps
