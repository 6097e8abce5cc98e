"""Recall's search (docs/architecture.md, "Recall"; ``compaction.store.recall``) on SQLite
(FTS5) and the real PostgreSQL (``to_tsvector('simple', …)``): it finds a compacted original and
never a live message, ranks, keeps to the token budget, redacts secrets and finds CJK text."""

from __future__ import annotations

from dataclasses import replace

import pytest

from compaction.core.messages import Message
from compaction.core.redact import REDACTED
from compaction.core.tokens import text_estimator
from compaction.store import Store
from compaction.store.recall import within_budget
from tests.fakes import conversation
from tests.integration.helpers import compact_session, new_session

ESTIMATE = text_estimator()
SECRET = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" * 2


def planted(turns: int = 30) -> list[Message]:
    """``conversation`` with a unique word in every message (``wordN``), a secret and a CJK
    sentence in the third turn's tool result."""
    out = []
    for i, message in enumerate(conversation(turns, tool_chars=3000)):
        extra = f" word{i}"
        if message.role == "tool" and message.tool_call_id == "call_2":
            extra += f"\nOPENAI_API_KEY={SECRET} 数据库迁移失败了 deploy_key_alpha"
        out.append(replace(message, content=message.content + extra))
    return out


@pytest.fixture
def compacted(store: Store) -> tuple[str, set[int], set[int]]:
    """A compacted session: its id, the words of compacted rows and of live rows."""
    session_id, ids = new_session(store, planted())
    compact_session(store, session_id)
    full = store.load_history(session_id, "full")
    gone = {ids.index(s.id) for s in full if s.compacted_at is not None and s.id in ids}
    live = {ids.index(s.id) for s in store.load_history(session_id) if s.id in ids}
    assert gone and live, "the scenario must compact some rows and keep others"
    return session_id, gone, live


def test_finds_a_compacted_original_never_a_live_one(
    store: Store, compacted: tuple[str, set[int], set[int]]
) -> None:
    session_id, gone, live = compacted
    old, new = min(gone), max(live)
    found = store.recall(session_id, f"word{old}", 2_000, ESTIMATE)
    assert [hit.content.split()[-1] for hit in found.hits] == [f"word{old}"]
    assert store.recall(session_id, f"word{new}", 2_000, ESTIMATE).hits == []


def test_a_tool_result_names_its_tool_and_its_secret_is_redacted(
    store: Store, compacted: tuple[str, set[int], set[int]]
) -> None:
    session_id, _gone, _live = compacted
    found = store.recall(session_id, "deploy_key_alpha", 2_000, ESTIMATE)
    assert len(found.hits) == 1
    hit = found.hits[0]
    assert hit.role == "tool" and hit.tool_name == "bash"
    assert SECRET not in hit.content and REDACTED in hit.content


def test_cjk_words_are_found(store: Store, compacted: tuple[str, set[int], set[int]]) -> None:
    session_id, _gone, _live = compacted
    found = store.recall(session_id, "迁移失败", 2_000, ESTIMATE)
    assert len(found.hits) == 1 and "数据库迁移失败了" in found.hits[0].content


def test_ranked_by_terms_and_within_the_budget(
    store: Store, compacted: tuple[str, set[int], set[int]]
) -> None:
    session_id, _gone, _live = compacted
    # every user message says these words
    found = store.recall(session_id, "Please inspect directory", 60, ESTIMATE)
    assert found.matched > 1
    assert sum(hit.tokens for hit in found.hits) <= 60
    assert 0 < len(found.hits) < found.matched
    big = store.recall(session_id, "file_2.py", 100, ESTIMATE)
    assert any(hit.truncated for hit in big.hits)
    assert all(hit.tokens <= 50 for hit in big.hits)


def test_unknown_session_is_not_found(store: Store) -> None:
    from compaction.core.errors import SessionNotFound

    with pytest.raises(SessionNotFound):
        store.recall("no-such-session", "x", 100, ESTIMATE)


def test_a_match_that_does_not_fit_leaves_room_for_a_smaller_one() -> None:
    rows = [(1, 1, "tool", "x " * 400, None), (2, 2, "user", "short words", None)]
    hits = within_budget(rows, {}, "words", 10, ESTIMATE)
    assert [h.message_id for h in hits] == [1, 2] or [h.message_id for h in hits] == [2]
    assert sum(h.tokens for h in hits) <= 10


def test_a_long_match_is_cut_around_the_term_at_its_end(
    store: Store, compacted: tuple[str, set[int], set[int]]
) -> None:
    """A tool result of 3,000 characters says ``wordN`` last: a budget of 200 tokens (100 for
    one match) keeps the window that ends with it, and says what was cut before it."""
    session_id, gone, _live = compacted
    messages = planted()
    old = min(i for i in gone if messages[i].role == "tool")
    found = store.recall(session_id, f"word{old}", 200, ESTIMATE)
    [hit] = found.hits
    assert hit.truncated and hit.tokens <= 100
    assert hit.content.endswith(f"word{old}") and hit.content.startswith("… [")
    cut = int(hit.content.split("[", 1)[1].split()[0])
    assert cut + len(hit.content.split("] … ", 1)[1]) == len(messages[old].content)


def test_a_cut_match_keeps_the_query_words_and_the_secret_stays_hidden(
    store: Store, compacted: tuple[str, set[int], set[int]]
) -> None:
    session_id, _gone, _live = compacted
    found = store.recall(session_id, "迁移失败 deploy_key_alpha", 100, ESTIMATE)
    [hit] = found.hits
    assert hit.truncated and hit.tokens <= 50
    assert "数据库迁移失败了 deploy_key_alpha" in hit.content and SECRET not in hit.content
