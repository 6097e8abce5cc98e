"""Migration 0005 on a database holding agents, SQLite and a real PostgreSQL
(docs/architecture.md, "Tables", "Settings"): ``agent.token_budget`` added blank (the system's
budget, else the percentage), bounded by its check; the downgrade drops it, the agents and the
sessions' agents kept."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from alembic import command
from sqlalchemy import Engine, inspect, text
from sqlalchemy.exc import IntegrityError

from compaction.store.db import make_engine
from compaction.store.migrate import alembic_config, upgrade
from tests.integration.helpers import current_revision, differences, head_revision

NOW = "CURRENT_TIMESTAMP"


@pytest.fixture
def at_0004(fresh_url: str) -> Iterator[Engine]:
    """A database at revision 0004 with a tuned agent and its session."""
    upgrade(fresh_url, "0004")
    engine = make_engine(fresh_url)
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO agent (id, compaction_threshold_percent, created_at) "
                f"VALUES ('tuned', 50, {NOW})"
            )
        )
        conn.execute(
            text(
                f"INSERT INTO chat_session (id, agent_id, created_at) VALUES ('s1', 'tuned', {NOW})"
            )
        )
    yield engine
    engine.dispose()


def columns(engine: Engine) -> set[str]:
    return {c["name"] for c in inspect(engine).get_columns("agent")}


def state(engine: Engine) -> tuple[object, ...]:
    with engine.connect() as conn:
        agent = conn.execute(text("SELECT id, compaction_threshold_percent FROM agent")).all()
        session = conn.execute(text("SELECT id, agent_id FROM chat_session")).all()
    return tuple(agent), tuple(session)


def test_upgrade_adds_a_blank_bounded_budget_and_downgrade_drops_it(
    at_0004: Engine, fresh_url: str
) -> None:
    before = state(at_0004)

    upgrade(fresh_url)

    assert current_revision(at_0004) == head_revision()
    assert differences(at_0004) == []
    assert state(at_0004) == before
    with at_0004.connect() as conn:
        assert conn.execute(text("SELECT token_budget FROM agent")).scalar_one() is None
    with pytest.raises(IntegrityError), at_0004.begin() as conn:
        conn.execute(text("UPDATE agent SET token_budget = 999"))
    with at_0004.begin() as conn:
        conn.execute(text("UPDATE agent SET token_budget = 50000"))

    command.downgrade(alembic_config(fresh_url), "0004")

    assert current_revision(at_0004) == "0004"
    assert "token_budget" not in columns(at_0004)
    assert state(at_0004) == before  # SQLite did not copy the table: the session keeps its agent
    upgrade(fresh_url)  # and up again
    assert "token_budget" in columns(at_0004) and differences(at_0004) == []
