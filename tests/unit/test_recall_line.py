"""The summary's recall line (compaction/core/summary.py, ``RECALL_LINE``; docs/architecture.md,
"Recall"): every summary ends with one line, in the summary's language, telling the model the
originals can be searched; a second compaction keeps one, not two."""

from __future__ import annotations

from dataclasses import replace

import pytest

from compaction import compact
from compaction.core.prompts import Language
from compaction.core.summary import RECALL_LINE
from tests.fakes import SMALL, FakeSummarizer, conversation


@pytest.mark.parametrize("language", ["en", "zh"])
def test_one_recall_line_after_two_compactions(language: Language) -> None:
    config = SMALL.model_copy(update={"summary_language": language})
    first = compact(conversation(10), config, FakeSummarizer(), reason="manual")
    assert first.summary_text.endswith(RECALL_LINE[language])
    later = conversation(10, first_turn=10, system=False)
    messages = [replace(m, id=i) for i, m in enumerate([*first.messages, *later], start=1)]
    second = compact(messages, config, FakeSummarizer(), reason="manual")
    assert second.summary_text.endswith(RECALL_LINE[language])
    assert second.summary_text.count(RECALL_LINE[language]) == 1


def test_a_previous_summary_loses_its_recall_line() -> None:
    from compaction.core.summary import without_recall_line

    for line in RECALL_LINE.values():
        assert without_recall_line(f"## Goal\nShip it.\n\n{line}") == "## Goal\nShip it."
    assert without_recall_line(None) is None
