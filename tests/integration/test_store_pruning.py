"""Pruning persisted by the store (docs/architecture.md, "Tables"): a pruned row that stays in
the context shows its placeholder in the compacted and display views and its original in the
full view, both marks written by one transaction. On SQLite and on the real PostgreSQL database
(``store`` fixture)."""

from __future__ import annotations

import pytest

from compaction.core.pruning import PLACEHOLDER
from compaction.store import EventRow, Store
from tests.integration.helpers import (
    PRUNING,
    compact_session,
    messages_of,
    new_session,
    pruning_conversation,
    rows_by_id,
)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_pruned_rows_placeholder_compacted_original_full(store: Store, language: str) -> None:
    messages = pruning_conversation()
    session_id, ids = new_session(store, messages)
    config = PRUNING.model_copy(update={"summary_language": language})
    planned, applied = compact_session(store, session_id, config, event=EventRow("Compacted"))
    result = planned.result
    assert result.language == language
    tail_ids = {s.id for s in planned.view[result.middle[1] :]}
    pruned_in_tail = [i for i in result.pruned_ids if i in tail_ids]
    assert len(pruned_in_tail) >= 2, "the scenario must prune rows that stay in the context"
    assert list(planned.plan.pruned_ids) == pruned_in_tail
    assert applied.pruned_count == len(pruned_in_tail)
    original = {i: m.content for i, m in zip(ids, messages, strict=True)}

    compacted = store.load_history(session_id)
    assert messages_of(compacted) == planned.expected_view(applied)
    visible = rows_by_id(compacted)
    for row_id in pruned_in_tail:
        row = visible[row_id]
        assert row.message.content == PLACEHOLDER[language]
        assert row.message.original_content == original[row_id]
        assert row.message.source_text == original[row_id]
        assert row.pruned_at is not None and row.compacted_at is None
    unpruned = [s for s in compacted if s.id not in pruned_in_tail]
    assert all(s.pruned_at is None and s.message.original_content is None for s in unpruned)
    # The user's screen shows the same placeholders, with the run's bubble after them.
    *display, done = store.load_history(session_id, "display")
    assert display == compacted and done.is_event

    full = rows_by_id(store.load_history(session_id, "full"))
    for row_id in ids:
        row = full[row_id]
        assert row.message.content == original[row_id]
        assert row.message.original_content is None
        assert (row.pruned_at is not None) == (row_id in pruned_in_tail)
    # Pruned in the middle by phase 1 but compacted: only compacted_at is persisted there.
    assert all(full[i].pruned_at is None for i in result.compressed_ids)
    # The same transaction wrote both marks.
    stamps = {full[i].pruned_at for i in pruned_in_tail} | {
        full[i].compacted_at for i in result.compressed_ids
    }
    assert len(stamps) == 1
