"""Benchmark of recall (docs/architecture.md, "Recall") on each shared transcript, PostgreSQL and
SQLite: what the full-text search costs a write, and what a search costs.

    python -m benchmarks.recall [--repeat N]

Per transcript and database: the append of the whole transcript at migration 0006 (no search
objects) and at head (the GIN index on PostgreSQL, the FTS5 table and its triggers on SQLite),
then a manual compaction (the instant summarizer) and recall of five queries drawn from the
compacted rows (a long word of every fifth one, deterministic), each with a 2,000-token budget.
Prints median ms of ``--repeat`` runs and how many queries found their row; nothing is
asserted. PostgreSQL is a throwaway database beside ``COMPACTION_TEST_POSTGRES_URL``.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

from benchmarks.engine import TRANSCRIPTS, InstantSummarizer, transcript
from benchmarks.store import database, timed
from compaction import CompactionConfig, compact
from compaction.core.errors import NothingToCompact
from compaction.core.messages import Message
from compaction.core.tokens import text_estimator
from compaction.store import RunOrigin, Store, compaction_write, make_engine, make_sessionmaker
from compaction.store.migrate import upgrade

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{7,}")


@contextmanager
def stores(kind: str, revision: str) -> Iterator[Store]:
    with _database_url(kind) as url:
        upgrade(url, revision)
        engine = make_engine(url)
        try:
            yield Store(make_sessionmaker(engine))
        finally:
            engine.dispose()


@contextmanager
def _database_url(kind: str) -> Iterator[str]:
    """A throwaway database of ``kind``, dropped or deleted afterwards."""
    if kind == "postgresql":
        with database() as url:
            yield url
        return
    with tempfile.TemporaryDirectory() as folder:
        yield f"sqlite:///{Path(folder) / 'bench.db'}"


def append_ms(store: Store, messages: list[Message], repeat: int) -> float:
    def once() -> None:
        store.append_messages(store.create_session(), messages)

    return statistics.median(timed(once)[0] for _ in range(repeat))


def queries(store: Store, session_id: str) -> list[str]:
    """A long word of every fifth compacted row (at most five)."""
    full = store.load_history(session_id, "full")
    gone = [s.message.content for s in full if s.compacted_at is not None]
    words = [max(_WORD.findall(text), key=len, default="") for text in gone[::5]]
    return [w for w in words if w][:5]


def search(
    store: Store, messages: list[Message], config: CompactionConfig, repeat: int
) -> tuple[float, int, int]:
    session_id = store.create_session()
    store.append_messages(session_id, messages)
    view = store.load_history(session_id)
    try:
        result = compact([s.message for s in view], config, InstantSummarizer(), reason="manual")
    except NothingToCompact:
        return 0.0, 0, 0
    version = store.get_session(session_id).compaction_version
    store.apply_compaction(
        compaction_write(view, result, RunOrigin(session_id=session_id), version)
    )
    asked = queries(store, session_id)
    estimate = text_estimator()
    times = [
        statistics.median(
            timed(partial(store.recall, session_id, q, 2_000, estimate))[0] for _ in range(repeat)
        )
        for q in asked
    ]
    found = sum(1 for q in asked if store.recall(session_id, q, 2_000, estimate).hits)
    return (statistics.median(times) if times else 0.0), found, len(asked)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"$ python -m benchmarks.recall --repeat {args.repeat}\n")
    print("| transcript | db | rows | append 0006 ms | append head ms | recall ms | found |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for path in sorted(TRANSCRIPTS.glob("*.json")):
        messages, config = transcript(path)
        for kind in ("postgresql", "sqlite"):
            with stores(kind, "0006") as store:
                before = append_ms(store, messages, args.repeat)
            with stores(kind, "head") as store:
                after = append_ms(store, messages, args.repeat)
                ms, found, asked = search(store, messages, config, args.repeat)
            print(
                f"| {path.stem} | {kind} | {len(messages)} | {before:.1f} | {after:.1f} "
                f"| {ms:.2f} | {found}/{asked} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
