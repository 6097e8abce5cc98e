"""Storage: SQLAlchemy models, migrations, the repositories and their facade ``Store``
(docs/architecture.md, "Tables")."""

from compaction.store.db import make_engine, make_sessionmaker
from compaction.store.listing import SessionListing
from compaction.store.records import (
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
from compaction.store.repository import Store

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
