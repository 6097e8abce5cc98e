"""Identifier survival (issue 24), computed by benchmarks/survival.py's reference extractor when
the test runs (no figure written down here):

- the shared transcripts: every kind of identifier of the compacted span is in the result
  verbatim (the issue's definition), >= GOAL per kind, both spans;
- the synthetic shapes (``benchmarks/shapes.py``): >= GOAL per kind by the definition named in
  each test's id. ``verbatim`` where the ledger's budget holds them; ``reachable`` (verbatim, or
  one recall of it against the stored originals returns it, where the summary says the rest did
  not fit: ``benchmarks/reach.py``) for the two shapes that read thousands of numbered lines
  (``subagent``, ``edits``), which no 8,000-token ledger lists."""

from __future__ import annotations

import re

import pytest

from benchmarks.engine import InstantSummarizer
from benchmarks.reach import sqlite_store, stored
from benchmarks.survival import GOAL, KINDS, config_for, load, survival
from compaction import compact_staged
from compaction.core.ledger import parse
from compaction.core.receipt import compacted_span, receipt_of
from tests.fakes import TRANSCRIPT_NAMES

#: The definition each shape reaches the goal by (docs/survival.md).
SHAPES = {
    "research": "verbatim",
    "reasoning": "verbatim",
    "subagent": "reachable",
    "edits": "reachable",
}


@pytest.mark.parametrize("span", ["middle", "receipt"])
@pytest.mark.parametrize("name", TRANSCRIPT_NAMES)
def test_every_kind_survives_on_every_shared_transcript(name: str, span: str) -> None:
    rows = survival(name, span=span)
    assert [row.kind for row in rows] == list(KINDS)
    low = [f"{r.kind} {r.kept}/{r.found} {list(r.missing[:5])}" for r in rows if r.share < GOAL]
    assert low == [], f"{name} ({span}): {low}"


@pytest.mark.parametrize(("shape", "definition"), SHAPES.items())
def test_every_kind_is_kept_on_every_shape_by_its_definition(shape: str, definition: str) -> None:
    rows = survival(f"shape:{shape}")
    low = [f"{r.kind} {r.by(definition)[0]}/{r.found}" for r in rows if r.by(definition)[1] < GOAL]
    assert low == [], f"{shape} ({definition}): {low}"
    for row in rows:  # what is verbatim is reachable; recall adds, never more than was found
        assert row.kept <= row.reachable <= row.found


def test_reachable_counts_only_what_a_recall_returns() -> None:
    # shape:edits overflows its ledger: its summary names recall, and a recall of an identifier
    # it left out returns a stored original that holds it; one the session never held, none.
    with sqlite_store() as store:
        messages = load("shape:edits")
        done = stored(store, messages, config_for(messages))
        assert done.overflowed()
        output = "\n".join(m.content for m in done.staged.messages)
        left_out = next(
            word
            for m in messages
            for word in m.content.split()
            if word.count("_") == 1 and word.split("_")[1].isdigit() and word not in output
        )
        assert done.recalled(left_out)
        assert not done.recalled("never_424242")
        assert done.reached([left_out, "never_424242"]) == 1


def test_nothing_is_reached_where_the_summary_does_not_name_recall() -> None:
    # every identifier of this transcript fits its ledger: no overflow line, so a missing one
    # counts as reachable only if it is verbatim (no recall is assumed)
    with sqlite_store() as store:
        messages = load("deerflow_7cfa5f8f")
        done = stored(store, messages, config_for(messages))
        assert not done.overflowed()
        assert done.reached(["anything"]) == 0
    rows = {r.kind: r for r in survival("deerflow_7cfa5f8f")}
    assert rows["paths"].reachable == rows["paths"].kept


@pytest.mark.parametrize("shape", ["subagent", "edits"])
def test_the_overflow_count_and_the_receipt_agree(shape: str) -> None:
    # the receipt counts an identifier kept when the result holds it verbatim (the ledger's
    # items held inside a listed one too); the overflow line counts what the ledger neither
    # lists nor holds: the receipt's missing are among those (the rest are in kept messages)
    messages = load(f"shape:{shape}")
    staged = compact_staged(messages, config_for(messages), InstantSummarizer(), reason="manual")
    result = staged.last
    receipt = receipt_of(compacted_span(messages, result), result)
    said = re.search(r"(\d+) more did not fit", result.summary_text)
    assert said is not None
    missing = sum(receipt.missing_counts.values())
    assert 0 < missing <= int(said.group(1))
    _, ledger = parse(result.summary_text)
    assert ledger is not None
    listed = set(ledger.all_items())
    assert not listed & {i for items in receipt.missing.values() for i in items}


def test_the_receipt_span_holds_the_pruned_outputs() -> None:
    # deerflow_3823e443's search results are pruned in the kept tail, not summarized: the
    # receipt's span counts them, the middle's does not.
    middle = {r.kind: r.found for r in survival("deerflow_3823e443", span="middle")}
    receipt = {r.kind: r.found for r in survival("deerflow_3823e443", span="receipt")}
    assert receipt["urls"] > 100 > middle["urls"]
