"""A compaction's receipt: what of the compacted span the result still holds (docs/architecture.md,
"Receipt").

The span is what a stage summarized (its middle) and what it pruned. Its exact identifiers are
the ledger's own candidates (``summary.span_identifiers``: one extractor, redacted as the ledger
is; the middle's, then the pruned outputs' new ones, as the ledger takes them), and one is
*kept* when it is in the result verbatim: in the summary (its body or its ledger) or in a
message the result keeps. Each real user message of the span
(``messages.own_words``) is kept verbatim or *folded* into the summary: after a compaction the
user is reminded that those constraints now live in the summary.

Pure and one pass over each side: the result's text is joined and indexed once (``Haystack``),
and each identifier is looked up in it, not searched for by a scan of the text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from compaction.core.arguments import readable, strings_of
from compaction.core.contract import AuxTokens, Count, Receipt, UserMessageCount
from compaction.core.ledger import KINDS, merged
from compaction.core.messages import Message, own_words
from compaction.core.redact import redact
from compaction.core.result import CompactionResult
from compaction.core.summary import span_identifiers
from compaction.core.turns import Turns
from compaction.core.user_words import first_line

__all__ = ["MAX_LISTED", "SpanReceipt", "compacted_span", "cost_of", "receipt_of"]

#: The most items a receipt lists per kind (and folded instructions): the counts stay exact,
#: the lists are what a person reads (and what a run record stores).
MAX_LISTED = 200


@dataclass(frozen=True, slots=True)
class SpanReceipt:
    """Per kind, how many identifiers the span held and those the result does not; how many
    real user messages it held and the first lines of those folded into the summary."""

    totals: dict[str, int]
    missing: dict[str, tuple[str, ...]]
    missing_counts: dict[str, int]
    user_total: int
    folded: tuple[str, ...]
    folded_count: int

    @property
    def total(self) -> int:
        return sum(self.totals.values())

    @property
    def kept(self) -> int:
        return self.total - sum(self.missing_counts.values())

    @property
    def verbatim(self) -> int:
        return self.user_total - self.folded_count

    def counts(
        self,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
        cost: float | None = None,
    ) -> Receipt:
        """The wire form (``compaction_done.receipt``); aux tokens only when the stage called
        the auxiliary model."""
        aux = None
        if input_tokens is not None or output_tokens is not None:
            aux = AuxTokens(input=input_tokens or 0, output=output_tokens or 0)
        return Receipt(
            identifiers=Count(kept=self.kept, total=self.total),
            user_messages=UserMessageCount(verbatim=self.verbatim, total=self.user_total),
            aux_tokens=aux,
            cost=cost,
        )

    def lists(self) -> dict[str, Any]:
        """The run record's JSON (``compaction_run.receipt``, the runs API's ``receipt``)."""
        return {
            "identifiers": {
                "kept": self.kept,
                "total": self.total,
                "totals": dict(self.totals),
                "missingCounts": dict(self.missing_counts),
                "missing": {kind: list(items) for kind, items in self.missing.items() if items},
            },
            "userMessages": {
                "verbatim": self.verbatim,
                "total": self.user_total,
                "folded": list(self.folded),
            },
        }


def cost_of(
    input_tokens: int, output_tokens: int, price_input: float | None, price_output: float | None
) -> float | None:
    """USD for a stage's auxiliary calls at a channel's prices per million tokens; ``None`` when
    the channel has no price (a price left out of two counts as zero)."""
    if price_input is None and price_output is None:
        return None
    return (input_tokens * (price_input or 0.0) + output_tokens * (price_output or 0.0)) / 1e6


def compacted_span(before: Sequence[Message], result: CompactionResult) -> list[Message]:
    """The messages of ``before`` (a stage's input) that ``result`` summarized or pruned: the
    middle, then the pruned ones outside it (found by their stored ids)."""
    start, end = result.middle if result.summarized else (0, 0)
    span = list(before[start:end])
    pruned = set(result.pruned_ids)
    if pruned:
        span += [m for i, m in enumerate(before) if m.id in pruned and not start <= i < end]
    return span


class Haystack:
    """A text that answers ``item in text`` for many items without a scan of it per item: a
    middle gives hundreds of thousands of identifiers, most of them not kept, and the kept
    messages may be a megabyte (docs/architecture.md, "Receipt").

    An item without white space lies inside one word of the text: it is one of the text's
    distinct words, or inside one of those that hold its rarest ``GRAM``-character piece. An
    item with white space is looked for in the text only when its inner words are words of the
    text and its outer ones are inside some (each a condition of its being there)."""

    GRAM = 6

    def __init__(self, text: str) -> None:
        self.text = text
        self.words = list(dict.fromkeys(text.split()))
        self.exact = frozenset(self.words)
        self._joined: str | None = None
        self._grams: dict[str, list[int]] | None = None

    def holds(self, item: str) -> bool:
        tokens = item.split()
        if len(tokens) == 1 and tokens[0] == item:
            return self._inside_a_word(item)
        if not tokens:
            return item in self.text
        inner = all(token in self.exact for token in tokens[1:-1])
        ends = inner and self._inside_a_word(tokens[0]) and self._inside_a_word(tokens[-1])
        return ends and item in self.text

    def _inside_a_word(self, token: str) -> bool:
        if token in self.exact:
            return True
        if len(token) < self.GRAM:  # short: rare among identifiers; the distinct words, once
            if self._joined is None:
                self._joined = "\n".join(self.words)
            return token in self._joined
        grams, rarest = self._index(), None
        for at in range(len(token) - self.GRAM + 1):
            posting = grams.get(token[at : at + self.GRAM])
            if posting is None:
                return False
            if rarest is None or len(posting) < len(rarest):
                rarest = posting
        words = self.words
        return rarest is not None and any(token in words[i] for i in rarest)

    def _index(self) -> dict[str, list[int]]:
        """Each ``GRAM``-character piece of the distinct words: the words holding it."""
        if self._grams is None:
            grams: dict[str, list[int]] = {}
            size = self.GRAM
            for index, word in enumerate(self.words):
                for gram in {word[at : at + size] for at in range(len(word) - size + 1)}:
                    grams.setdefault(gram, []).append(index)
            self._grams = grams
        return self._grams


def receipt_of(
    span: Sequence[Message], result: CompactionResult, *, redact_secrets: bool = True
) -> SpanReceipt:
    """The receipt of a stage: ``span`` is what it compacted (``compacted_span``: the middle,
    then the pruned outputs outside it), ``result`` what it returned; ``redact_secrets`` as the
    stage's config (the ledger's items are redacted alike, so a secret is never listed as
    missing)."""
    # the summary (body and ledger) first: a result holds it among its messages too
    kept = Haystack(result.summary_text + "\n" + _text(result.messages))
    totals: dict[str, int] = {}
    missing: dict[str, tuple[str, ...]] = {}
    counts: dict[str, int] = {}
    for kind, items in _identifiers(span, result, redact_secrets).items():
        lost = [i for i in items if not kept.holds(i)]
        totals[kind], counts[kind], missing[kind] = len(items), len(lost), tuple(lost[:MAX_LISTED])
    # the span's turns as ``Turns.of`` takes them (summaries left out), without a third pass
    # over every call's arguments: ``_identifiers`` makes the two the ledger's memo needs
    users = _user_words(m for m in span if not m.is_summary)
    folded = [m for m in users if not kept.holds(m)]
    return SpanReceipt(
        totals={k: totals.get(k, 0) for k in KINDS},
        missing={k: missing.get(k, ()) for k in KINDS},
        missing_counts={k: counts.get(k, 0) for k in KINDS},
        user_total=len(users),
        # the user's own words, redacted in their context (a key typed there stays out)
        folded=tuple(first_line(redact(m)) for m in folded[:MAX_LISTED]),
        folded_count=len(folded),
    )


def _identifiers(
    span: Sequence[Message], result: CompactionResult, redact_secrets: bool
) -> dict[str, list[str]]:
    """The span's candidates taken as the ledger takes them: its middle's (the first
    ``compacted_span`` gives), then the new ones of the pruned outputs after it; so both
    parts are the extractions ``summarize`` remembered (docs/benchmarks.md, "Overheads")."""
    start, end = result.middle if result.summarized else (0, 0)
    size = min(end - start, len(span))
    if size <= 0 or size == len(span):
        return span_identifiers(Turns.of(span), redact_secrets)
    middle = span_identifiers(Turns.of(span[:size]), redact_secrets)
    return merged(middle, span_identifiers(Turns.of(span[size:]), redact_secrets))


def _user_words(messages: Iterable[Message]) -> list[str]:
    """The user's own words (``messages.own_words``: injected texts left out), empty ones too."""
    return [text for m in messages if (text := own_words(m))]


def _text(messages: Iterable[Message]) -> str:
    """What the model reads of ``messages``: contents and tool-call arguments (decoded)."""
    parts: list[str] = []
    for message in messages:
        parts.append(message.content)
        parts.extend(readable(c.arguments, strings_of(c.arguments)) for c in message.tool_calls)
    return "\n".join(parts)
