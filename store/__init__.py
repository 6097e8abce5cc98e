"""Storage: SQLAlchemy models, migrations, the repositories and their facade ``Store``
(docs/architecture.md, "Tables")."""

from store.db import make_engine, make_sessionmaker
from store.listing import SessionListing
from store.records import (
    AgentSettings,
    AppliedCompaction,
    ChannelConfig,
    CompactionWrite,
    EventRow,
    FailedRun,
    RunOrigin,
    RunRecord,
    SessionInfo,
    StoredMessage,
    SummaryWrite,
    compaction_write,
)
from store.repository import Store

__all__ = [
    "AgentSettings",
    "AppliedCompaction",
    "ChannelConfig",
    "CompactionWrite",
    "EventRow",
    "FailedRun",
    "RunOrigin",
    "RunRecord",
    "SessionInfo",
    "SessionListing",
    "Store",
    "StoredMessage",
    "SummaryWrite",
    "compaction_write",
    "make_engine",
    "make_sessionmaker",
]
