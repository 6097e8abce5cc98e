"""Phase 3: the summary of the middle (docs/architecture.md, "The algorithm").

The middle is serialized, redacted and searched for exact identifiers once; then the summarizer
folds it chunk by chunk (each call gets the summary so far, ``compaction/core/chunks.py``), so a
middle longer than the auxiliary model's window is summarized all the same. The summary message
is the fixed prefix, the summarizer's body and the identifier ledger.

What the summarizer returns is not trusted: a reply under ``min_summary_chars`` or over twice
``summary_max_tokens`` is refused, and an opening it copied is dropped (the engine writes one).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Protocol, runtime_checkable

from compaction.core import ledger, user_words
from compaction.core.arguments import redacted
from compaction.core.chunks import Chunk, fit, plan
from compaction.core.config import CompactionConfig
from compaction.core.errors import SummaryTooLong, SummaryTooShort
from compaction.core.messages import Message
from compaction.core.picking import acted_on
from compaction.core.prompts import HISTORY, Language, PromptSet
from compaction.core.prompts_loop import LOOP, is_loop_summary
from compaction.core.redact import Rules, Secrets, redact, redact_many, rules_for
from compaction.core.serialize import serialize
from compaction.core.storable import storable
from compaction.core.tokens import TextEstimator, text_estimator
from compaction.core.turns import Turns

#: The least room a call keeps for the turns: a focus that would leave less is cut.
_MIN_TURNS_TOKENS = 1_000
#: A reply longer than this many times ``summary_max_tokens`` is refused (``summary_too_long``):
#: past the budget the model was given, with room for a model that overshoots it.
SUMMARY_LIMIT_FACTOR = 2


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
    #: the most tokens a summary may have (twice ``summary_max_tokens``; 0: no limit)
    max_tokens: int = 0
    #: how ``max_tokens`` is counted (the config's estimator)
    estimate: TextEstimator = field(default=text_estimator(), repr=False, compare=False)
    #: the kind of summary asked for: its templates and fixed opening (the history's, the loop's)
    prompts: PromptSet = field(default=HISTORY, repr=False, compare=False)

    def accepted(self, reply: str) -> str:
        """The summary body the engine keeps of a reply: stripped, without an opening the
        model copied. Raises ``SummaryTooShort`` or ``SummaryTooLong`` where the engine refuses
        it; a summarizer with a fallback calls it to decide on the engine's rules."""
        body = self.prompts.strip(reply.strip())
        if len(body) < self.min_chars:
            raise SummaryTooShort(
                f"the summary has {len(body)} characters, under the minimum of {self.min_chars}"
            )
        if self.max_tokens and (size := self.estimate(body)) > self.max_tokens:
            raise SummaryTooLong(
                f"the summary is ~{size} tokens, over twice summary_max_tokens "
                f"({self.max_tokens} tokens)"
            )
        return body


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
    estimate: TextEstimator


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
    middle_tokens: int,
    language: Language,
    focus: str | None,
    head: Sequence[Message],
    lap: Callable[[str], None],
    prompts: PromptSet = HISTORY,
    pruned: Sequence[Message] = (),
) -> Summary:
    """The summary message's content; ``lap`` is called at the end of each step (timings).
    ``middle_tokens`` (the middle's estimate) sets the budget (docs/architecture.md, "The
    algorithm", phase 3); ``prompts`` is the kind of summary (the history's by default);
    ``pruned`` are the tool outputs phase 1 emptied outside the middle, as they were: the ledger
    lists their identifiers too (docs/architecture.md, "Receipt")."""
    previous, turns = _split(middle, previous_summary, prompts)
    previous = without_recall_line(previous)
    # the user's words are the summary's last section: taken off first, so that a user's text
    # that holds a ledger heading stays the user's (compaction/core/user_words.py)
    previous, previous_words = user_words.parse(previous or "")
    previous_body, previous_ledger = _previous(previous or None)
    material = _prepare(turns, config)
    # What redaction takes out of the turns in context, kept out of what is made from them
    # without it: the ledger's items, a summary quoting the turns.
    secrets = Secrets.of(material.turns.texts, material.rules or ())
    lap("serialize")
    found = (
        _remember(
            material.turns,
            config.redact_secrets,
            ledger.extract(material.turns, material.words, material.rules, secrets),
        )
        if config.ledger_max_tokens
        else {}
    )
    if pruned and config.ledger_max_tokens:
        outside = Turns.of(pruned)
        found = ledger.merged(
            found,
            _remember(
                outside,
                config.redact_secrets,
                span_identifiers(outside, config.redact_secrets),
                fresh=False,
            ),
        )
    lap("ledger")
    scrub = redact if config.redact_secrets else _identity
    first = _first(
        config, scrub(previous_body or ""), scrub(focus or ""), language, middle_tokens, prompts
    )
    # What a call holds besides its turns: the frame and the summary so far (capped).
    fixed = config.summary_max_tokens + _frame(first, first.focus)
    chunks = plan(
        material.turns.messages,
        material.entries,
        material.sizes,
        config.summary_input_max_tokens - fixed,
        material.estimate,
    )
    first = replace(first, chunk_count=len(chunks), head=tuple(head))
    folded = _fold(summarizer, first, material, chunks, scrub, config.summary_max_tokens)
    lap("summarize")
    acted = partial(acted_on, material.turns)  # asked when the cap binds
    kept = ledger.build(found, previous_ledger, config.ledger_max_tokens, config.estimator(), acted)
    # The model's text goes to the database: what no database stores is replaced, not refused.
    words = _user_words(turns, previous_words, config, language)
    parts = [prompts.prefix[language], storable(folded.body), ledger.render(kept, language), words]
    parts.append(RECALL_LINE[language])
    text = "\n\n".join(p for p in parts if p)
    return Summary(
        secrets.hide(redact(text)) if config.redact_secrets else text,
        folded.chunks,
        folded.input_tokens,
        folded.output_tokens,
        ledger_items=len(kept),
        ledger_dropped=kept.dropped,
    )


#: the summary's last line (docs/architecture.md, "Recall"): the originals can be read back
RECALL_LINE: Mapping[Language, str] = {
    "en": "(The original messages this summary replaced can be searched with the recall tool.)",
    "zh": "（本摘要所替代的原始消息可用 recall 工具检索。）",
}


def without_recall_line(previous: str | None) -> str | None:
    """A previous summary without its recall line (the new summary ends with its own)."""
    if previous is None:
        return None
    for line in RECALL_LINE.values():
        previous = previous.replace("\n\n" + line, "").replace(line, "")
    return previous


def _user_words(
    turns: Sequence[Message],
    previous: user_words.Words | None,
    config: CompactionConfig,
    language: Language,
) -> str:
    """The section of the user's own words (``compaction/core/user_words.py``): this span's
    before the previous summary's; redacted with the rest of the summary."""
    if not config.user_words_max_tokens:
        return ""
    texts = user_words.of(turns)
    kept = user_words.build(texts, previous, config.user_words_max_tokens, config.estimator())
    return user_words.render(kept, language)


def _prepare(middle: Sequence[Message], config: CompactionConfig) -> _Material:
    """The middle's turns serialized, redacted when the config says so, and estimated."""
    turns = Turns.of(middle)
    words = turns.distinct_words() if config.redact_secrets or config.ledger_max_tokens else []
    head, tail = config.serialize_head_chars, config.serialize_tail_chars
    rules = None
    if config.redact_secrets:
        rules = span_rules(turns, words)
        shown = redacted(turns.messages, rules, turns.escaped)
        entries = redact_many(serialize(shown, head, tail), rules)
    else:
        entries = serialize(turns.messages, head, tail)
    estimate = config.estimator()
    return _Material(turns, entries, list(map(estimate, entries)), words, rules, estimate)


def span_rules(turns: Turns, words: Sequence[str]) -> Rules:
    """The redaction rules of a span: chosen on its distinct ``words`` and its tool names."""
    # The entries are made of these words (cut), the tool names and the role tags; an
    # escaped argument's secrets are matched on its strings (compaction/core/arguments.py).
    return rules_for(" ".join([*words, *(call.name for call in turns.calls)]))


def span_identifiers(turns: Turns, redact_secrets: bool) -> dict[str, list[str]]:
    """The ledger's candidates of ``turns``, redacted as ``summarize`` redacts them: what a
    receipt counts (``compaction/core/receipt.py``)."""
    remembered = _recalled(turns, redact_secrets)
    if remembered is not None:
        return remembered
    words = turns.distinct_words()
    rules = span_rules(turns, words) if redact_secrets else None
    secrets = Secrets.of(turns.texts, rules or ())
    return ledger.extract(turns, words, rules, secrets)


#: The extractions ``summarize`` made last, by what each depends on (``_extraction_key``): its
#: middle's and, when it pruned outside it, those outputs' (the ledger takes the two apart);
#: the worker's receipt of the stage reads the same two parts again right after
#: (docs/benchmarks.md, "Overheads": 10-20 ms of a 466-message session's job). Replaced whole
#: by each ``summarize``.
_LAST: dict[tuple[object, ...], dict[str, list[str]]] = {}


def _extraction_key(turns: Turns, redact_secrets: bool) -> tuple[object, ...]:
    """All ``ledger.extract`` reads of ``turns`` (its texts, what was spoken, the calls) and
    the redaction switch: equal keys give equal candidates."""
    calls = tuple((call.name, call.arguments) for call in turns.calls)
    return (redact_secrets, tuple(turns.texts), tuple(turns.spoken), calls)


def _remember(
    turns: Turns, redact_secrets: bool, found: dict[str, list[str]], *, fresh: bool = True
) -> dict[str, list[str]]:
    """Remember ``found`` for ``turns``: alone (``fresh``, a new ``summarize``) or beside the
    entry already there (the pruned outputs' beside the middle's)."""
    global _LAST
    entry = {_extraction_key(turns, redact_secrets): {k: list(v) for k, v in found.items()}}
    _LAST = entry if fresh else {**_LAST, **entry}
    return found


def _recalled(turns: Turns, redact_secrets: bool) -> dict[str, list[str]] | None:
    """A copy of the remembered candidates when ``turns`` are what they were taken from."""
    found = _LAST.get(_extraction_key(turns, redact_secrets))
    return None if found is None else {k: list(v) for k, v in found.items()}


def _first(
    config: CompactionConfig,
    previous: str,
    focus: str,
    language: Language,
    middle_tokens: int,
    prompts: PromptSet,
) -> SummaryRequest:
    """What every call shares. The previous summary is cut to ``summary_max_tokens`` (the room
    a call keeps for it), and a focus to what leaves the turns ``_MIN_TURNS_TOKENS``."""
    estimate = config.estimator()
    first = SummaryRequest(
        prompt="",
        serialized="",
        previous_summary=fit(previous, config.summary_max_tokens, estimate) or None,
        budget_tokens=config.summary_budget(middle_tokens),
        language=language,
        min_chars=config.min_summary_chars,
        max_tokens=SUMMARY_LIMIT_FACTOR * config.summary_max_tokens,
        estimate=estimate,
        prompts=prompts,
    )
    room = config.summary_input_max_tokens - config.summary_max_tokens - _MIN_TURNS_TOKENS
    return replace(first, focus=fit(focus, room - _frame(first, None), estimate) or None)


def _frame(request: SummaryRequest, focus: str | None) -> int:
    """The most a call's prompt holds besides the summary so far and the turns, with either
    template, plus a token for each of the two places they go in (``compaction/core/chunks.py``)."""
    prompts = (
        request.prompts.build(request.language, "", request.budget_tokens, previous, focus)
        for previous in (None, "-")
    )
    return max(map(request.estimate, prompts)) + 2


def _split(
    middle: Sequence[Message], previous_summary: str | None, prompts: PromptSet
) -> tuple[str | None, list[Message]]:
    """The summary this one updates (the one given, else the latest of the same kind inside the
    middle, which the given one supersedes), and the turns to summarize. Any other summary there
    (an execution summary the history now holds, an older one) is read as a turn of the
    agent's, so that nothing it says is lost."""
    own = [i for i, m in enumerate(middle) if m.is_summary and _kind(m) is prompts]
    updated = own[-1] if own else None
    if previous_summary is None and updated is not None:
        previous_summary = middle[updated].content
    turns = [
        Message(role="assistant", content=m.content) if m.is_summary and i != updated else m
        for i, m in enumerate(middle)
        if not (m.is_summary and i == updated)
    ]
    return previous_summary, turns


def _kind(summary: Message) -> PromptSet:
    return LOOP if is_loop_summary(summary) else HISTORY


def _previous(previous_summary: str | None) -> tuple[str | None, ledger.Ledger | None]:
    """The body and the ledger of the summary this one updates."""
    if not previous_summary:
        return None, None
    kind = LOOP if previous_summary.startswith(LOOP.marker) else HISTORY
    return ledger.parse(kind.strip(previous_summary))


def _fold(
    summarizer: Summarizer,
    first: SummaryRequest,
    material: _Material,
    chunks: Sequence[Chunk],
    scrub: Callable[[str], str],
    running_max: int,
) -> _Folded:
    """One summarizer call per chunk, each given the summary so far (cut to ``running_max``
    tokens: a reply may run over its budget, the room a call keeps for it may not)."""
    running, body = first.previous_summary, ""
    input_tokens = output_tokens = 0
    for number, chunk in enumerate(chunks):
        text = chunk.text(material.entries)
        request = replace(
            first,
            prompt=first.prompts.build(
                first.language, text, first.budget_tokens, running, first.focus
            ),
            serialized=text,
            previous_summary=running,
            chunk_index=number,
            messages=tuple(material.turns.messages[chunk.start : chunk.end]),
        )
        reply = summarizer.summarize(request)
        body = request.accepted(scrub(_text_of(reply)))
        input_tokens += int(getattr(reply, "input_tokens", 0) or 0)
        output_tokens += int(getattr(reply, "output_tokens", 0) or 0)
        running = fit(body, running_max, material.estimate)
    return _Folded(body, len(chunks), input_tokens, output_tokens)


def _text_of(reply: object) -> str:
    if isinstance(reply, str):
        return reply
    text = getattr(reply, "text", None)
    if not isinstance(text, str):
        raise SummaryTooShort("the summarizer returned no text")
    return text


def _identity(text: str) -> str:
    return text
