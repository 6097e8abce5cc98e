"""Recall (docs/architecture.md, "Recall"): full-text search over a session's compacted
originals, the messages folded into a summary or pruned, never the live view (the model already
has those).

PostgreSQL searches ``message.content_tsv`` (``to_tsvector('simple', content)``, stored, with a
GIN index: migration 0007; ``simple``: no stemming, so code words and names match as written);
SQLite searches the FTS5 table ``message_fts`` the same migration keeps in sync by triggers. A
query holding CJK text, or a database without the FTS table (a SQLite built without FTS5),
falls back to ``LIKE`` on each term: neither tokenizer splits CJK runs into words; so does a
search that matched nothing (a word inside a longer token: a path, a dotted name). Matches are
ranked, redacted (``compaction.core.redact``: the model must not read back a key the summary
hid), cut to a share of the budget each (the window around where the query's terms occur:
``compaction.core.excerpt``), and kept while they fit ``max_tokens``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, and_, bindparam, func, literal_column, or_, select, text
from sqlalchemy.orm import Session

from compaction.core.errors import SessionNotFound
from compaction.core.excerpt import excerpt
from compaction.core.redact import redact
from compaction.core.tokens import TextEstimator
from compaction.store.db import Repository, read_session
from compaction.store.history import not_event
from compaction.store.models import ChatSession
from compaction.store.models import Message as MessageRow

#: the most terms of a query searched (the rest ignored)
MAX_TERMS = 16
#: the most matches read before the budget picks
MAX_CANDIDATES = 50
#: one match takes at most this share of the budget, so that a long page leaves room for others
ONE_SHARE = 0.5
_WORD = re.compile(r"\w+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
FTS_TABLE = "message_fts"
#: what migration 0007 makes and the models do not declare (the FTS5 table and its shadow
#: tables, the GIN index): left out of autogenerate's comparison (``alembic check``)
NOT_MODELLED = (FTS_TABLE, "ix_message_content_fts", "content_tsv")


def include_object(
    obj: object, name: str | None, kind: str, reflected: bool, other: object
) -> bool:
    """Alembic's ``include_object`` hook: everything but ``NOT_MODELLED``."""
    return not (reflected and name is not None and name.startswith(NOT_MODELLED))


@dataclass(frozen=True, slots=True)
class RecallHit:
    message_id: int
    seq: int
    role: str
    content: str
    #: the tool a ``tool`` row answered (from its assistant's call), else ``None``
    tool_name: str | None
    #: the content was cut to fit
    truncated: bool
    tokens: int


@dataclass(frozen=True, slots=True)
class RecallResult:
    hits: list[RecallHit]
    #: matches found (before the budget)
    matched: int


def query_terms(query: str, split: Callable[[str], list[str]] = _WORD.findall) -> list[str]:
    """The words of ``query`` (``split``), each once, in order (at most ``MAX_TERMS``)."""
    seen: dict[str, None] = {}
    for word in split(query.lower()):
        seen.setdefault(word, None)
    return list(seen)[:MAX_TERMS]


def _compacted(session_id: str) -> Any:
    return and_(
        MessageRow.session_id == session_id,
        or_(MessageRow.compacted_at.is_not(None), MessageRow.pruned_at.is_not(None)),
        MessageRow.is_compaction_summary.is_(False),
        not_event(),
    )


_HIT_COLUMNS = (
    MessageRow.id,
    MessageRow.seq,
    MessageRow.role,
    MessageRow.content,
    MessageRow.tool_call_id,
)


_HitSelect = Select[int, int, str, str, str | None]


def _postgres(session_id: str, terms: Sequence[str]) -> _HitSelect:
    vector: Any = literal_column("message.content_tsv")  # to_tsvector('simple', content), stored
    tsquery: Any = None
    for i, term in enumerate(terms):
        part = func.plainto_tsquery(literal_column("'simple'"), bindparam(f"t{i}", term))
        tsquery = part if tsquery is None else tsquery.op("||")(part)
    assert tsquery is not None
    rank = func.ts_rank(vector, tsquery)
    return (
        select(*_HIT_COLUMNS)
        .where(_compacted(session_id), vector.op("@@")(tsquery))
        .order_by(rank.desc(), MessageRow.seq.desc())
    )


def _sqlite(session_id: str, terms: Sequence[str]) -> _HitSelect:
    # each term quoted (FTS5 syntax characters are then plain text), any term matches
    match = " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)
    fts = text(
        f"SELECT rowid, bm25({FTS_TABLE}) AS rank FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH :m"
    )
    found = (
        fts.bindparams(m=match)
        .columns(literal_column("rowid"), literal_column("rank"))
        .subquery("fts")
    )
    return (
        select(*_HIT_COLUMNS)
        .join(found, found.c.rowid == MessageRow.id)
        .where(_compacted(session_id))
        .order_by(found.c.rank, MessageRow.seq.desc())  # bm25: lower is better
    )


def _like(session_id: str, terms: Sequence[str]) -> _HitSelect:
    likes = [MessageRow.content.ilike("%" + _escape(term) + "%", escape="\\") for term in terms]
    return (
        select(*_HIT_COLUMNS)
        .where(_compacted(session_id), or_(*likes))
        .order_by(MessageRow.seq.desc())
    )


def _escape(term: str) -> str:
    return term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _has_fts(session: Session) -> bool:
    name = session.scalar(
        text("SELECT name FROM sqlite_master WHERE type = 'table' AND name = :n"),
        {"n": FTS_TABLE},
    )
    return name is not None


def _search(session: Session, session_id: str, query: str) -> list[Any]:
    terms = query_terms(query)
    if not terms:
        return []
    dialect = session.get_bind().dialect.name
    if _CJK.search(query):
        rows = session.execute(_like(session_id, terms).limit(4 * MAX_CANDIDATES)).all()
        # more of the terms first, then the newest (the order the query gave)
        score = {row[0]: sum(term in row[3].lower() for term in terms) for row in rows}
        return sorted(rows, key=lambda row: -score[row[0]])[:MAX_CANDIDATES]
    if dialect == "postgresql":
        # whole words: ``plainto_tsquery`` parses each as the index parsed the text
        # (``file_2.py`` is one token there)
        statement = _postgres(session_id, query_terms(query, str.split))
    elif dialect == "sqlite" and _has_fts(session):
        statement = _sqlite(session_id, terms)
    else:
        statement = _like(session_id, terms)
    rows = list(session.execute(statement.limit(MAX_CANDIDATES)).all())
    if rows:
        return rows
    # A word the parser keeps inside a longer token (``src/app/views.py`` is one token on
    # PostgreSQL) is found by ``LIKE``
    return list(session.execute(_like(session_id, terms).limit(MAX_CANDIDATES)).all())


def _tool_names(session: Session, session_id: str, rows: Sequence[Any]) -> dict[int, str]:
    """The tool each ``tool`` row of ``rows`` answered: the call of the same id in the nearest
    assistant row before it."""
    names: dict[int, str] = {}
    for row in rows:
        call_id = row[4]
        if row[2] != "tool" or call_id is None:
            continue
        calls = session.scalars(
            select(MessageRow.tool_calls)
            .where(
                MessageRow.session_id == session_id,
                MessageRow.role == "assistant",
                MessageRow.seq <= row[1],
                MessageRow.tool_calls.is_not(None),
            )
            .order_by(MessageRow.seq.desc())
            .limit(4)
        ).all()
        name = next(
            (
                _call_name(call)
                for listed in calls
                for call in listed or ()
                if call.get("id") == call_id
            ),
            None,
        )
        if name:
            names[row[0]] = name
    return names


def _call_name(call: dict[str, Any]) -> str | None:
    fn = call.get("function")
    name = fn.get("name") if isinstance(fn, dict) else call.get("name")
    return name if isinstance(name, str) else None


def within_budget(
    rows: Sequence[Any],
    names: dict[int, str],
    query: str,
    max_tokens: int,
    estimate: TextEstimator,
) -> list[RecallHit]:
    """The ranked ``rows`` redacted, each cut to ``ONE_SHARE`` of the budget around where
    ``query``'s terms occur in it (``compaction.core.excerpt``), kept while the total fits
    ``max_tokens`` (a match that no longer fits is skipped: a smaller one may)."""
    share = max(1, int(max_tokens * ONE_SHARE))
    hits: list[RecallHit] = []
    left = max_tokens
    for message_id, seq, role, content, _call in rows:
        cut, truncated = excerpt(redact(content), query, min(share, left), estimate)
        tokens = estimate(cut)
        if tokens > left or not cut.strip():
            continue
        hits.append(RecallHit(message_id, seq, role, cut, names.get(message_id), truncated, tokens))
        left -= tokens
        if left <= 0:
            break
    return hits


class Recall(Repository):
    def recall(
        self, session_id: str, query: str, max_tokens: int, estimate: TextEstimator
    ) -> RecallResult:
        """The compacted originals of ``session_id`` matching ``query``, ranked, redacted and
        within ``max_tokens`` (``estimate``'s tokens); ``SessionNotFound`` for an unknown
        session."""
        with read_session(self.factory) as session:
            if session.get(ChatSession, session_id) is None:
                raise SessionNotFound(f"session {session_id!r} not found")
            rows = _search(session, session_id, query)
            names = _tool_names(session, session_id, rows)
        hits = within_budget(rows, names, query, max_tokens, estimate)
        return RecallResult(hits, len(rows))
