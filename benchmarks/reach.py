"""The survival benchmark's second definition, printed beside the issue's (docs/survival.md):
an identifier is *reachable* when it is in the compacted output verbatim, or when the summary
says that some did not fit (the ledger's overflow line, ``ledger.overflow_line``) and one recall
of that identifier against the stored originals returns a message holding it.

Computed for real: the transcript is stored in a temporary SQLite database at the head
migration (FTS5, ``compaction.store.recall``), each stage's result is written as the worker
writes it (``compaction_write``, ``apply_compaction``), and the recall is the store's, with the
budget the recall tool asks by default.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from benchmarks.engine import InstantSummarizer
from compaction import CompactionConfig, compact_staged
from compaction.core.ledger import HEADINGS
from compaction.core.messages import Message
from compaction.core.staged import Staged
from compaction.core.tokens import text_estimator
from compaction.producers.recall import DEFAULT_TOKENS
from compaction.store import RunOrigin, Store, compaction_write, make_engine, make_sessionmaker
from compaction.store.migrate import upgrade

#: The overflow line in every language, its count any number.
_OVERFLOW = re.compile(
    "|".join(
        re.escape(lang["overflow"]).replace(re.escape("{count}"), r"\d+")
        for lang in HEADINGS.values()
    )
)


@contextmanager
def sqlite_store() -> Iterator[Store]:
    """A store on a new SQLite file at the head migration, removed on exit."""
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'survival.db'}"
        upgrade(url, "head")
        engine = make_engine(url)
        try:
            yield Store(make_sessionmaker(engine))
        finally:
            engine.dispose()


@dataclass(frozen=True)
class Stored:
    """A transcript stored and compacted in ``store`` as the worker does it."""

    store: Store
    session_id: str
    #: the messages as the store gives them back (the stages ran on these)
    messages: list[Message]
    staged: Staged

    def overflowed(self) -> bool:
        """A stage's summary says that some identifiers did not fit its ledger."""
        results = (self.staged.history, self.staged.loop)
        return any(_OVERFLOW.search(r.summary_text) for r in results if r is not None)

    def recalled(self, item: str) -> bool:
        """One recall of ``item`` returns a compacted original holding it verbatim."""
        found = self.store.recall(self.session_id, item, DEFAULT_TOKENS, _ESTIMATE)
        return any(item in hit.content for hit in found.hits)

    def reached(self, missing: Iterable[str]) -> int:
        """How many of ``missing`` (not verbatim in the output) one recall reaches; none when
        no summary says where the rest are."""
        return sum(map(self.recalled, missing)) if self.overflowed() else 0


_ESTIMATE = text_estimator()


def stored(store: Store, messages: list[Message], config: CompactionConfig) -> Stored:
    """``messages`` appended to a new session of ``store`` and compacted in both stages
    (``compact_staged``), each stage's result written on the view it was computed from."""
    session_id = store.create_session()
    store.append_messages(session_id, messages)
    view = store.load_history(session_id)
    loaded = [s.message for s in view]
    staged = compact_staged(loaded, config, InstantSummarizer(), reason="manual")
    seen = loaded
    for result in (staged.history, staged.loop):
        if result is None:
            continue
        # the loop's indexes are in what the history stage left: the view loaded after it
        if [m.content for m in seen] != [s.message.content for s in view]:
            raise RuntimeError(f"the stored view of {session_id} is not what the stage read")
        version = store.get_session(session_id).compaction_version
        origin = RunOrigin(session_id=session_id)
        store.apply_compaction(compaction_write(view, result, origin, version))
        view, seen = store.load_history(session_id), result.messages
    return Stored(store, session_id, loaded, staged)
