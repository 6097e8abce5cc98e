"""Helpers shared by the store's integration tests (``test_store_*.py``, ``test_migrations*.py``).

Each helper works on the ``store``/``engine`` fixtures of ``tests/conftest.py``, so everything
built on them runs against SQLite and against the real PostgreSQL database alike.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, event, inspect, text

from compaction import CompactionConfig, compact
from compaction.core.engine import CompactionResult
from compaction.core.messages import Message
from compaction.store import (
    AppliedCompaction,
    CompactionWrite,
    EventRow,
    FailedRun,
    RunOrigin,
    Store,
    StoredMessage,
    compaction_write,
)
from compaction.store.migrate import alembic_config
from compaction.store.models import Base
from compaction.store.recall import include_object
from tests.fakes import SMALL, FakeSummarizer, conversation

#: With conversation(30, tool_chars=3000): phase 1 prunes every tool output before the last ~10
#: turns, and the long minimum tail keeps four of those pruned rows in the tail, so the write
#: persists ``pruned_at`` on rows that stay visible. (The plain 60,000 window alone puts every
#: pruned row in the middle: the tail budget ends exactly where pruning starts.)
PRUNING = CompactionConfig(context_window=60_000, min_tail_messages=60)
#: The most parameters one PostgreSQL statement may carry.
MAX_PARAMETERS = 65_535


def seed_forty() -> list[Message]:
    """The specification's integration conversation: 40 messages (a system prompt and 39 turns'
    worth), ending on a tool result."""
    return conversation(10)[:40]


def pruning_conversation() -> list[Message]:
    return conversation(30, tool_chars=3000)


def new_session(store: Store, messages: Sequence[Message] = ()) -> tuple[str, list[int]]:
    session_id = store.create_session()
    ids = store.append_messages(session_id, list(messages)) if messages else []
    return session_id, ids


def messages_of(view: Sequence[StoredMessage]) -> list[Message]:
    return [stored.message for stored in view]


@dataclass
class Planned:
    """A compaction computed by the core on the loaded compacted view, not yet applied."""

    view: list[StoredMessage]
    result: CompactionResult
    plan: CompactionWrite
    summarizer: FakeSummarizer = field(default_factory=FakeSummarizer)

    @property
    def compressed_ids(self) -> list[int]:
        return list(self.result.compressed_ids)

    def expected_view(self, applied: AppliedCompaction) -> list[Message]:
        """The core's output with the summary carrying the id of the row that holds it."""
        return [
            replace(m, id=applied.summary_message_id) if m.id is None and m.is_summary else m
            for m in self.result.messages
        ]


def plan(
    store: Store,
    session_id: str,
    config: CompactionConfig = SMALL,
    summarizer: FakeSummarizer | None = None,
    *,
    origin: RunOrigin | None = None,
    model: str | None = None,
    event: EventRow | None = None,
) -> Planned:
    """Load the compacted view, compact it with the core (manual), and plan the write-back."""
    summarizer = summarizer or FakeSummarizer()
    view = store.load_history(session_id)
    result = compact(messages_of(view), config, summarizer, reason="manual")
    version = store.get_session(session_id).compaction_version
    origin = origin or RunOrigin(session_id=session_id)
    write = compaction_write(view, result, origin, version, model=model, event=event)
    return Planned(view, result, write, summarizer)


#: With pruning_conversation(): an auto request that phase 1 alone brings under the threshold.
PHASE_ONE = CompactionConfig(context_window=30_000)


def phase_one(store: Store, session_id: str, event: EventRow | None = None) -> Planned:
    """An auto request that pruning alone finished: a write without a summary."""
    view = store.load_history(session_id)
    result = compact(messages_of(view), PHASE_ONE, FakeSummarizer(), reason="auto")
    assert not result.summarized and result.pruned_ids
    origin = RunOrigin(session_id=session_id, reason="auto")
    version = store.get_session(session_id).compaction_version
    return Planned(view, result, compaction_write(view, result, origin, version, event=event))


def failed_run(session_id: str) -> FailedRun:
    """A plain failed auto run: it changes no message."""
    origin = RunOrigin(session_id=session_id, reason="auto")
    return FailedRun(origin=origin, code="llm_timeout", error="slow")


def record_run(store: Store, session_id: str, before: int | None, after: int | None) -> None:
    """A succeeded run that changed no message but measured ``before`` and ``after`` tokens
    (what the anti-loop rule reads)."""
    write = CompactionWrite(
        origin=RunOrigin(session_id=session_id, reason="auto"),
        expected_version=store.get_session(session_id).compaction_version,
        tokens_before=before,
        tokens_after=after,
    )
    store.apply_compaction(write)


def compact_session(
    store: Store, session_id: str, *args: Any, **kwargs: Any
) -> tuple[Planned, AppliedCompaction]:
    """``plan`` (same arguments), then applied."""
    planned = plan(store, session_id, *args, **kwargs)
    return planned, store.apply_compaction(planned.plan)


def rows_by_id(view: Sequence[StoredMessage]) -> dict[int, StoredMessage]:
    return {stored.id: stored for stored in view}


# --- the database itself ------------------------------------------------------------------


def snapshot(engine: Engine) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table of the schema, in id order."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    with engine.connect() as conn:
        for table in Base.metadata.sorted_tables:
            rows = conn.execute(text(f"SELECT * FROM {table.name} ORDER BY id"))
            out[table.name] = [tuple(row) for row in rows]
    return out


#: The tables of the schema (docs/architecture.md, "Tables").
TABLES = {
    "agent",
    "chat_session",
    "message",
    "model_channel",
    "dict_type",
    "dict_info",
    "compaction_run",
    "context_token_stat",
    "compaction_draft",
}


def table_names(engine: Engine) -> set[str]:
    names = set(inspect(engine).get_table_names()) - {"alembic_version"}
    # recall's FTS5 tables (migration 0007) are not the design's tables
    return {name for name in names if include_object(None, name, "table", True, None)}


def differences(engine: Engine) -> list[Any]:
    """What Alembic would change to bring the database to the models."""
    with engine.connect() as conn:
        context = MigrationContext.configure(
            conn,
            opts={
                "compare_type": True,
                "compare_server_default": True,
                "include_object": include_object,
            },
        )
        return list(compare_metadata(context, Base.metadata))


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()


def parameter_count(parameters: Any, executemany: bool) -> int:
    """Bound parameters of one statement (the largest set of an executemany)."""
    if parameters is None:
        return 0
    sets = list(parameters) if isinstance(parameters, list | tuple) else [parameters]
    if executemany and all(isinstance(p, Mapping | list | tuple) for p in sets):
        return max((len(p) for p in sets), default=0)
    return len(parameters)


@dataclass
class Statement:
    sql: str
    parameters: int
    executemany: bool

    @property
    def normalized(self) -> str:
        return " ".join(self.sql.split()).lower()

    @property
    def parts(self) -> list[str]:
        """The statement, and each data-modifying CTE's body from its start (``WITH fenced AS
        (UPDATE chat_session ...), summary AS (INSERT INTO message ...) SELECT ...``: the
        session's fence and the summary's INSERT in one statement on PostgreSQL)."""
        sql = self.normalized
        return [sql, *(sql[m.end() :] for m in re.finditer(r"\b\w+ as \(", sql))]

    def is_update_of(self, table: str, column: str) -> bool:
        for sql in self.parts:
            head, _, rest = sql.partition(" set ")
            if head == f"update {table}" and rest.split(" where ")[0].find(column) >= 0:
                return True
        return False

    def is_insert_into(self, table: str) -> bool:
        return any(sql.startswith(f"insert into {table} ") for sql in self.parts)


@contextmanager
def recorded(engine: Engine) -> Iterator[list[Statement]]:
    """Every statement the engine sends while the block runs."""
    statements: list[Statement] = []

    def record(
        _conn: Any, _cursor: Any, sql: str, parameters: Any, _ctx: Any, executemany: bool
    ) -> None:
        statements.append(Statement(sql, parameter_count(parameters, executemany), executemany))

    event.listen(engine, "before_cursor_execute", record)
    try:
        yield statements
    finally:
        event.remove(engine, "before_cursor_execute", record)


class InjectedFailure(Exception):
    """Raised by ``failing`` in place of a statement (not a driver error)."""


def driver_error(engine: Engine, message: str = "injected failure") -> Exception:
    """An error of the engine's own DB-API driver, as a broken connection would raise."""
    return engine.dialect.loaded_dbapi.OperationalError(message)


@contextmanager
def failing(
    engine: Engine | type[Engine],
    matches: Callable[[Statement], bool],
    *,
    nth: int = 1,
    error: Callable[[], BaseException] = lambda: InjectedFailure("injected failure"),
) -> Iterator[list[Statement]]:
    """Raise ``error()`` in place of the ``nth`` statement that ``matches``; yields the
    statements that matched (the block fails the test when none reached the failure).
    ``Engine`` itself listens on every engine (a command's own, built from the settings)."""
    hits: list[Statement] = []

    def maybe_fail(
        _conn: Any, _cursor: Any, sql: str, parameters: Any, _ctx: Any, executemany: bool
    ) -> None:
        statement = Statement(sql, parameter_count(parameters, executemany), executemany)
        if matches(statement):
            hits.append(statement)
            if len(hits) == nth:
                raise error()

    event.listen(engine, "before_cursor_execute", maybe_fail)
    try:
        yield hits
    finally:
        event.remove(engine, "before_cursor_execute", maybe_fail)
    assert len(hits) >= nth, f"the failure was never injected ({len(hits)} matching statements)"


#: An API key the channel tests store, then look for where it must not show.
KEY = "sk-live-Zq8vT3mN6pW1xR4yB7cK0dF2"


def aux(store: Store, name: str, **kwargs: Any) -> int:
    """A new auxiliary channel (Anthropic by default); its id."""
    kwargs.setdefault("provider", "anthropic")
    kwargs.setdefault("model", "claude-haiku")
    return store.add_channel(name, auxiliary=True, **kwargs).id


#: ``cli.main`` run in-process: argv in, (status, stdout, stderr) out (the ``command`` fixture)
Command = Callable[..., tuple[int, str, str]]


def ok(command: Command, *argv: str) -> str:
    status, out, err = command(*argv)
    assert (status, err) == (0, ""), err
    return out


def shown(command: Command, agent: str) -> dict[str, Any]:
    row: dict[str, Any] = json.loads(ok(command, "agent", "show", agent, "--json"))
    return row
