"""``compact()``: the four phases end to end (seed §3, DESIGN §3–§4).

Pure: the summarizer is passed in, nothing here touches a network, a database or a clock other
than ``time.perf_counter`` for the per-phase timings.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from compaction import ledger as ledger_mod
from compaction.assembly import ORPHAN_RESULT, assemble
from compaction.boundaries import find_bounds, head_end
from compaction.config import CompactionConfig
from compaction.errors import (
    InvalidRequest,
    MessageTooLarge,
    NothingToCompact,
    SummaryTooShort,
    SystemPromptTooLarge,
)
from compaction.messages import Message
from compaction.prompts import Language, build_prompt, detect_language, strip_prefix, summary_prefix
from compaction.pruning import PLACEHOLDER, prune
from compaction.redact import redact, redact_many, rules_for
from compaction.serialize import serialize
from compaction.tokens import TextEstimator, estimate_tokens
from compaction.turns import Turns
from compaction.validate import ensure_valid

Reason = Literal["auto", "manual"]


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    """What a summarizer gets for one call (one per chunk of a long middle)."""

    prompt: str
    serialized: str
    previous_summary: str | None
    budget_tokens: int
    language: Language
    focus: str | None = None
    chunk_index: int = 0
    chunk_count: int = 1
    #: the turns of this chunk (original contents), for summarizers that work without an LLM
    messages: tuple[Message, ...] = ()
    #: the protected head, kept verbatim before the summary (where the first goal usually is)
    head: tuple[Message, ...] = ()


@runtime_checkable
class Summarizer(Protocol):
    def summarize(self, request: SummaryRequest) -> object:
        """Return the summary as ``str``, or an object with ``.text`` (and optionally
        ``.input_tokens`` / ``.output_tokens``)."""
        ...


@dataclass
class CompactionResult:
    messages: list[Message]
    tokens_before: int
    tokens_after: int
    summarized: bool
    compressed_ids: list[int] = field(default_factory=list)
    removed_count: int = 0
    pruned_ids: list[int] = field(default_factory=list)
    pruned_count: int = 0
    summary_text: str = ""
    summary_message: Message | None = None
    language: Language = "en"
    #: index range of the input that the summary replaced, ``(start, end)``; empty when none
    middle: tuple[int, int] = (0, 0)
    chunks: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    ledger_items: int = 0
    ledger_dropped: int = 0
    timings: dict[str, float] = field(default_factory=dict)


class _Clock:
    def __init__(self) -> None:
        self.timings: dict[str, float] = {}
        self._last = time.perf_counter()

    def lap(self, phase: str) -> None:
        now = time.perf_counter()
        self.timings[phase] = self.timings.get(phase, 0.0) + now - self._last
        self._last = now


def compact(
    messages: Iterable[Message],
    config: CompactionConfig | None = None,
    summarizer: Summarizer | None = None,
    previous_summary: str | None = None,
    *,
    reason: Reason = "auto",
    focus: str | None = None,
) -> CompactionResult:
    """Compact a conversation; see DESIGN §4 for the rules.

    ``reason="auto"`` runs only at or above the threshold and stops after phase 1 when pruning
    alone gets under it; ``reason="manual"`` (``/compact``) always runs all four phases.
    Raises a ``CompactionError`` subclass rather than returning a half-done result.
    """
    config = config or CompactionConfig()
    clock = _Clock()
    items = list(messages)
    ensure_valid(items, provider="openai")  # malformed input is refused, never "repaired"
    estimate = config.estimator()
    counts = [estimate_tokens(m, estimate) for m in items]
    before = sum(counts)
    threshold = config.threshold_tokens
    language: Language = (
        detect_language(items) if config.summary_language == "auto" else config.summary_language
    )
    system_tokens = 0
    for message, count in zip(items, counts, strict=True):
        if message.role != "system":
            break
        system_tokens += count
    if system_tokens >= threshold:
        raise SystemPromptTooLarge(
            f"the system prompt alone is ~{system_tokens} tokens, over the threshold of "
            f"{threshold}; shorten it"
        )
    unchanged = CompactionResult(items, before, before, summarized=False, language=language)
    if reason == "auto" and before < threshold:
        return unchanged
    head = head_end(items, config.protect_first_n)
    if len(items) <= head:
        raise NothingToCompact(f"only {len(items)} messages, all in the protected head")
    clock.lap("estimate")

    pruned_items, pruned_at = prune(
        items,
        counts,
        head_end=head,
        budget=config.tail_token_budget,
        min_chars=config.prune_min_chars,
        placeholder=PLACEHOLDER[language],
    )
    if pruned_at:  # every pruned message is a tool result holding the same placeholder
        pruned_tokens = estimate_tokens(pruned_items[pruned_at[0]], estimate)
        for index in pruned_at:
            counts[index] = pruned_tokens
    pruned_ids = [i for i in (items[k].id for k in pruned_at) if i is not None]
    clock.lap("prune")
    if reason == "auto" and sum(counts) < threshold:
        return CompactionResult(
            pruned_items,
            before,
            sum(counts),
            summarized=False,
            pruned_ids=pruned_ids,
            pruned_count=len(pruned_at),
            language=language,
            timings=clock.timings,
        )

    bounds = find_bounds(
        pruned_items,
        counts,
        protect_first_n=config.protect_first_n,
        tail_budget=config.tail_token_budget,
        min_tail_messages=config.min_tail_messages,
    )
    if bounds.head_end > head:
        # The head grew past the last user message: what phase 1 pruned there is head now,
        # and the head is never changed.
        for index in range(head, bounds.head_end):
            pruned_items[index] = items[index]
            counts[index] = estimate_tokens(items[index], estimate)
        pruned_at = [i for i in pruned_at if i >= bounds.head_end]
        pruned_ids = [i for i in (items[k].id for k in pruned_at) if i is not None]
    kept = [*range(bounds.head_end), *range(bounds.tail_start, len(items))]
    largest = max(kept, key=counts.__getitem__, default=None)
    if largest is not None and counts[largest] >= threshold:
        raise MessageTooLarge(
            f"message {largest} alone is ~{counts[largest]} tokens, over the threshold of "
            f"{threshold}; split it"
        )
    middle = pruned_items[bounds.head_end : bounds.tail_start]
    if len(middle) < 2 or all(m.is_summary for m in middle):
        raise NothingToCompact(
            f"the middle between the protected head and the tail holds {len(middle)} message(s)"
        )
    if summarizer is None:
        raise InvalidRequest("compact() needs a summarizer to summarize the middle")
    clock.lap("boundaries")

    summary_text, stats = _summarize(
        middle,
        config,
        summarizer,
        previous_summary,
        language,
        focus,
        estimate,
        clock,
        head=tuple(pruned_items[: bounds.head_end]),
    )
    summary = Message(role="user", content=summary_text)
    out = assemble(
        pruned_items[: bounds.head_end],
        summary,
        pruned_items[bounds.tail_start :],
        ORPHAN_RESULT[language],
    )
    clock.lap("assemble")
    return CompactionResult(
        out,
        before,
        sum(estimate_tokens(m, estimate) for m in out),
        summarized=True,
        compressed_ids=[m.id for m in middle if m.id is not None],
        removed_count=len(middle),
        pruned_ids=pruned_ids,
        pruned_count=len(pruned_at),
        summary_text=summary_text,
        summary_message=summary,
        language=language,
        middle=(bounds.head_end, bounds.tail_start),
        timings=clock.timings,
        **stats,
    )


def _summarize(
    middle: Sequence[Message],
    config: CompactionConfig,
    summarizer: Summarizer,
    previous_summary: str | None,
    language: Language,
    focus: str | None,
    estimate: TextEstimator,
    clock: _Clock,
    head: tuple[Message, ...],
) -> tuple[str, dict[str, int]]:
    """Phase 3: the summary message's content, folding chunk by chunk when the middle is long."""
    scrub = redact if config.redact_secrets else _identity
    if previous_summary is None:
        earlier = [m for m in middle if m.is_summary]
        previous_summary = earlier[-1].content if earlier else None
    previous_body, previous_ledger = (
        ledger_mod.parse(strip_prefix(previous_summary)) if previous_summary else (None, None)
    )
    turns = Turns.of(middle)
    words = turns.distinct_words() if config.redact_secrets or config.ledger_max_tokens else []
    entries = serialize(turns.messages, config.serialize_head_chars, config.serialize_tail_chars)
    rules = None
    if config.redact_secrets:
        # The entries are made of these words (cut), the tool names and the role tags.
        rules = rules_for(" ".join([*words, *(call.name for call in turns.calls)]))
        entries = redact_many(entries, rules)
    sizes = [estimate(e) for e in entries]
    budget = config.summary_budget(sum(sizes))
    clock.lap("serialize")
    found = ledger_mod.extract(turns, words, rules) if config.ledger_max_tokens else {}
    clock.lap("ledger")

    running = scrub(previous_body) if previous_body else None
    focus = scrub(focus) if focus else None
    chunks = _chunks(sizes, config.summary_input_max_tokens - config.summary_max_tokens - 1_000)
    input_tokens = output_tokens = 0
    for number, (start, end) in enumerate(chunks):
        text = "\n\n".join(entries[start:end])
        request = SummaryRequest(
            prompt=build_prompt(language, text, budget, running, focus),
            serialized=text,
            previous_summary=running,
            budget_tokens=budget,
            language=language,
            focus=focus,
            chunk_index=number,
            chunk_count=len(chunks),
            messages=tuple(turns.messages[start:end]),
            head=head,
        )
        reply = summarizer.summarize(request)
        body = scrub(_text_of(reply)).strip()
        if len(body) < config.min_summary_chars:
            raise SummaryTooShort(
                f"the summary has {len(body)} characters, under the minimum of "
                f"{config.min_summary_chars}"
            )
        input_tokens += int(getattr(reply, "input_tokens", 0) or 0)
        output_tokens += int(getattr(reply, "output_tokens", 0) or 0)
        running = body
    clock.lap("summarize")

    kept = ledger_mod.build(found, previous_ledger, config.ledger_max_tokens, estimate)
    parts = [summary_prefix(language), running or "", ledger_mod.render(kept, language)]
    stats = {
        "chunks": len(chunks),
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "ledger_items": len(kept),
        "ledger_dropped": kept.dropped,
    }
    return "\n\n".join(p for p in parts if p), stats


def _chunks(sizes: Sequence[int], cap: int) -> list[tuple[int, int]]:
    """Consecutive ``(start, end)`` ranges whose sizes sum to at most ``cap`` (a single larger
    entry is a chunk of its own)."""
    ranges: list[tuple[int, int]] = []
    start, total = 0, 0
    for index, size in enumerate(sizes):
        if index > start and total + size > cap:
            ranges.append((start, index))
            start, total = index, 0
        total += size
    if start < len(sizes):
        ranges.append((start, len(sizes)))
    return ranges


def _text_of(reply: object) -> str:
    if isinstance(reply, str):
        return reply
    text = getattr(reply, "text", None)
    if not isinstance(text, str):
        raise SummaryTooShort("the summarizer returned no text")
    return text


def _identity(text: str) -> str:
    return text
