"""Phase 3: the summary of the middle (docs/architecture.md, "The algorithm").

The middle is serialized, redacted and searched for exact identifiers once; then the summarizer
folds it chunk by chunk (each call gets the summary so far), so a middle longer than the
auxiliary model's window is summarized all the same. The summary message is the fixed prefix,
the summarizer's body and the identifier ledger.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol, runtime_checkable

from compaction import ledger
from compaction.config import CompactionConfig
from compaction.errors import SummaryTooShort
from compaction.messages import Message
from compaction.prompts import Language, build_prompt, strip_prefix, summary_prefix
from compaction.redact import Rules, redact, redact_many, rules_for
from compaction.serialize import serialize
from compaction.turns import Turns

#: Room a chunk leaves in a summarizer call for the prompt's own text (the running summary
#: gets ``summary_max_tokens``).
_PROMPT_ROOM_TOKENS = 1_000


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
    #: the fewest characters a summary may have (``min_summary_chars``)
    min_chars: int = 0

    def too_short(self, summary: str) -> bool:
        """The one rule for a summary that says too little: the engine refuses such a
        summary, and a summarizer with a fallback can use it to decide."""
        return len(summary.strip()) < self.min_chars


@runtime_checkable
class Summarizer(Protocol):
    def summarize(self, request: SummaryRequest) -> object:
        """Return the summary as ``str``, or an object with ``.text`` (and optionally
        ``.input_tokens`` / ``.output_tokens``)."""
        ...


@dataclass(frozen=True, slots=True)
class Summary:
    """The summary message's content, and what it took."""

    text: str
    chunks: int
    input_tokens: int
    output_tokens: int
    ledger_items: int
    ledger_dropped: int


@dataclass(frozen=True, slots=True)
class _Material:
    """The middle made ready for the summarizer: its turns serialized (and redacted), their
    estimated sizes, and what the ledger's search reuses (the distinct words, the rules)."""

    turns: Turns
    entries: list[str]
    sizes: list[int]
    words: list[str]
    rules: Rules | None


@dataclass(frozen=True, slots=True)
class _Folded:
    body: str
    chunks: int
    input_tokens: int
    output_tokens: int


def summarize(
    middle: Sequence[Message],
    config: CompactionConfig,
    summarizer: Summarizer,
    *,
    previous_summary: str | None,
    language: Language,
    focus: str | None,
    head: Sequence[Message],
    lap: Callable[[str], None],
) -> Summary:
    """The summary message's content; ``lap`` is called at the end of each step (timings)."""
    previous_body, previous_ledger = _previous(middle, previous_summary)
    material = _prepare(middle, config)
    lap("serialize")
    found = (
        ledger.extract(material.turns, material.words, material.rules)
        if config.ledger_max_tokens
        else {}
    )
    lap("ledger")
    scrub = redact if config.redact_secrets else _identity
    chunks = _chunks(
        material.sizes,
        config.summary_input_max_tokens - config.summary_max_tokens - _PROMPT_ROOM_TOKENS,
    )
    first = SummaryRequest(
        prompt="",
        serialized="",
        previous_summary=scrub(previous_body) if previous_body else None,
        budget_tokens=config.summary_budget(sum(material.sizes)),
        language=language,
        focus=scrub(focus) if focus else None,
        chunk_count=len(chunks),
        head=tuple(head),
        min_chars=config.min_summary_chars,
    )
    folded = _fold(summarizer, first, material, chunks, scrub)
    lap("summarize")
    kept = ledger.build(found, previous_ledger, config.ledger_max_tokens, config.estimator())
    parts = [summary_prefix(language), folded.body, ledger.render(kept, language)]
    return Summary(
        "\n\n".join(p for p in parts if p),
        folded.chunks,
        folded.input_tokens,
        folded.output_tokens,
        ledger_items=len(kept),
        ledger_dropped=kept.dropped,
    )


def _prepare(middle: Sequence[Message], config: CompactionConfig) -> _Material:
    """The middle's turns serialized, redacted when the config says so, and estimated."""
    turns = Turns.of(middle)
    words = turns.distinct_words() if config.redact_secrets or config.ledger_max_tokens else []
    entries = serialize(turns.messages, config.serialize_head_chars, config.serialize_tail_chars)
    rules = None
    if config.redact_secrets:
        # The entries are made of these words (cut), the tool names and the role tags.
        rules = rules_for(" ".join([*words, *(call.name for call in turns.calls)]))
        entries = redact_many(entries, rules)
    estimate = config.estimator()
    return _Material(turns, entries, [estimate(e) for e in entries], words, rules)


def _previous(
    middle: Sequence[Message], previous_summary: str | None
) -> tuple[str | None, ledger.Ledger | None]:
    """The body and the ledger of the summary this one updates: the one given, else the
    latest summary inside the middle."""
    if previous_summary is None:
        earlier = [m for m in middle if m.is_summary]
        previous_summary = earlier[-1].content if earlier else None
    if not previous_summary:
        return None, None
    return ledger.parse(strip_prefix(previous_summary))


def _fold(
    summarizer: Summarizer,
    first: SummaryRequest,
    material: _Material,
    chunks: Sequence[tuple[int, int]],
    scrub: Callable[[str], str],
) -> _Folded:
    """One summarizer call per chunk, each given the summary so far."""
    running = first.previous_summary
    input_tokens = output_tokens = 0
    for number, (start, end) in enumerate(chunks):
        text = "\n\n".join(material.entries[start:end])
        request = replace(
            first,
            prompt=build_prompt(first.language, text, first.budget_tokens, running, first.focus),
            serialized=text,
            previous_summary=running,
            chunk_index=number,
            messages=tuple(material.turns.messages[start:end]),
        )
        reply = summarizer.summarize(request)
        body = scrub(_text_of(reply)).strip()
        if request.too_short(body):
            raise SummaryTooShort(
                f"the summary has {len(body)} characters, under the minimum of {request.min_chars}"
            )
        input_tokens += int(getattr(reply, "input_tokens", 0) or 0)
        output_tokens += int(getattr(reply, "output_tokens", 0) or 0)
        running = body
    return _Folded(running or "", len(chunks), input_tokens, output_tokens)


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
