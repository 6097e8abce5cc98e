"""Migration 0003 on a database holding agents, SQLite and a real PostgreSQL
(docs/architecture.md, "Tables", "Settings"): an agent's threshold and protected head become
optional, existing values and the sessions' agents kept; the downgrade writes the old defaults
into blank values. Fresh databases: test_migrations.py."""

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
KNOBS = ("compaction_threshold_percent", "compaction_protect_first_n")


@pytest.fixture
def at_0002(fresh_url: str) -> Iterator[Engine]:
    """A database at revision 0002 with a 70/3 agent and a 50/5 agent (its own channel), each
    with a session, and a session without an agent."""
    upgrade(fresh_url, "0002")
    engine = make_engine(fresh_url)
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO model_channel (id, name, provider, model, is_auxiliary, created_at) "
                f"VALUES (7, 'aux', 'openai', 'm', true, {NOW})"
            )
        )
        conn.execute(text(f"INSERT INTO agent (id, created_at) VALUES ('plain', {NOW})"))
        conn.execute(
            text(
                "INSERT INTO agent (id, compaction_threshold_percent, compaction_protect_first_n, "
                f"auxiliary_model_channel_id, created_at) VALUES ('tuned', 50, 5, 7, {NOW})"
            )
        )
        conn.execute(
            text(
                "INSERT INTO chat_session (id, agent_id, created_at) VALUES "
                f"('s-plain', 'plain', {NOW}), ('s-tuned', 'tuned', {NOW}), ('s-none', NULL, {NOW})"
            )
        )
    yield engine
    engine.dispose()


def agents(engine: Engine) -> dict[str, tuple[int | None, int | None, int | None]]:
    with engine.connect() as conn:
        rows = conn.execute(
            text(
                f"SELECT id, {', '.join(KNOBS)}, auxiliary_model_channel_id FROM agent ORDER BY id"
            )
        ).all()
    return {row[0]: (row[1], row[2], row[3]) for row in rows}


def session_agents(engine: Engine) -> dict[str, str | None]:
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT id, agent_id FROM chat_session ORDER BY id")).all()
    return {row[0]: row[1] for row in rows}


def nullable(engine: Engine) -> dict[str, bool]:
    columns = inspect(engine).get_columns("agent")
    return {c["name"]: c["nullable"] for c in columns if c["name"] in KNOBS}


SESSIONS = {"s-none": None, "s-plain": "plain", "s-tuned": "tuned"}


def test_upgrade_keeps_the_values_and_the_sessions_agents_and_allows_blank(
    at_0002: Engine, fresh_url: str
) -> None:
    upgrade(fresh_url)

    assert current_revision(at_0002) == head_revision()
    assert agents(at_0002) == {"plain": (70, 3, None), "tuned": (50, 5, 7)}
    # SQLite copies the table and drops the old one, whose ON DELETE SET NULL would clear these
    assert session_agents(at_0002) == SESSIONS
    assert nullable(at_0002) == dict.fromkeys(KNOBS, True)
    assert differences(at_0002) == []
    with at_0002.begin() as conn:
        conn.execute(text(f"INSERT INTO agent (id, created_at) VALUES ('blank', {NOW})"))
    assert agents(at_0002)["blank"] == (None, None, None)


@pytest.mark.parametrize(
    "values",
    ["compaction_threshold_percent = 72", "compaction_threshold_percent = 96",
     "compaction_protect_first_n = 0", "compaction_protect_first_n = 11"],
)  # fmt: skip
def test_after_the_upgrade_the_checks_still_bound_a_value_that_is_set(
    at_0002: Engine, fresh_url: str, values: str
) -> None:
    upgrade(fresh_url)
    with pytest.raises(IntegrityError), at_0002.begin() as conn:
        conn.execute(text(f"UPDATE agent SET {values} WHERE id = 'tuned'"))
    assert agents(at_0002)["tuned"] == (50, 5, 7)


def test_downgrade_fills_blank_values_with_the_old_defaults(
    at_0002: Engine, fresh_url: str
) -> None:
    upgrade(fresh_url)
    with at_0002.begin() as conn:
        conn.execute(text(f"INSERT INTO agent (id, created_at) VALUES ('blank', {NOW})"))
        conn.execute(
            text(
                "INSERT INTO agent (id, compaction_protect_first_n, created_at) "
                f"VALUES ('half', 2, {NOW})"
            )
        )

    command.downgrade(alembic_config(fresh_url), "0002")

    assert current_revision(at_0002) == "0002"
    assert agents(at_0002) == {
        "blank": (70, 3, None),
        "half": (70, 2, None),
        "plain": (70, 3, None),
        "tuned": (50, 5, 7),
    }
    assert session_agents(at_0002) == SESSIONS
    assert nullable(at_0002) == dict.fromkeys(KNOBS, False)
    with at_0002.begin() as conn:  # the server defaults are back
        conn.execute(text(f"INSERT INTO agent (id, created_at) VALUES ('bare', {NOW})"))
    assert agents(at_0002)["bare"] == (70, 3, None)
    with pytest.raises(IntegrityError), at_0002.begin() as conn:
        conn.execute(text("UPDATE agent SET compaction_threshold_percent = NULL"))

    upgrade(fresh_url)  # and up again
    assert differences(at_0002) == []
    assert agents(at_0002)["tuned"] == (50, 5, 7)
