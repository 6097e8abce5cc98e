"""Storage: SQLAlchemy models, migrations and the repository (DESIGN §5)."""

from store.db import make_engine, make_sessionmaker
from store.records import (
    AgentSettings,
    AppliedCompaction,
    ChannelConfig,
    CompactionWrite,
    RunRecord,
    SessionInfo,
    StoredMessage,
)
from store.repository import Store

__all__ = [
    "AgentSettings",
    "AppliedCompaction",
    "ChannelConfig",
    "CompactionWrite",
    "RunRecord",
    "SessionInfo",
    "Store",
    "StoredMessage",
    "make_engine",
    "make_sessionmaker",
]
