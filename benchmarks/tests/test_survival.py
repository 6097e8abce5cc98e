"""Identifier survival on the shared transcripts, both definitions (issue 24): every kind of
identifier of the compacted span is in the result verbatim, >= GOAL per kind per transcript,
computed by benchmarks/survival.py's reference extractor (no figure written down here)."""

from __future__ import annotations

import pytest

from benchmarks.survival import GOAL, KINDS, survival
from tests.fakes import TRANSCRIPT_NAMES


@pytest.mark.parametrize("span", ["middle", "receipt"])
@pytest.mark.parametrize("name", TRANSCRIPT_NAMES)
def test_every_kind_survives_on_every_shared_transcript(name: str, span: str) -> None:
    rows = survival(name, span=span)
    assert [row.kind for row in rows] == list(KINDS)
    low = [f"{r.kind} {r.kept}/{r.found} {list(r.missing[:5])}" for r in rows if r.share < GOAL]
    assert low == [], f"{name} ({span}): {low}"


def test_the_receipt_span_holds_the_pruned_outputs() -> None:
    # deerflow_3823e443's search results are pruned in the kept tail, not summarized: the
    # receipt's span counts them, the middle's does not.
    middle = {r.kind: r.found for r in survival("deerflow_3823e443", span="middle")}
    receipt = {r.kind: r.found for r in survival("deerflow_3823e443", span="receipt")}
    assert receipt["urls"] > 100 > middle["urls"]
