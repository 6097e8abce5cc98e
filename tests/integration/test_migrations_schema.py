"""The schema the Alembic migrations build, on fresh databases, SQLite and a real PostgreSQL
(docs/architecture.md, "Tables"): every column, index, foreign key and check of the design, and
models and migrations in agreement. Upgrading and downgrading: test_migrations.py."""

from __future__ import annotations

from sqlalchemy import Engine, inspect

from tests.integration.helpers import TABLES, differences

COLUMNS = {
    "message": {
        "id",
        "session_id",
        "seq",
        "role",
        "content",
        "tool_calls",
        "tool_call_id",
        "metadata",
        "created_at",
        "compacted_at",
        "compacted_into_id",
        "is_compaction_summary",
        "pruned_at",
    },
    "agent": {
        "id",
        "auxiliary_model_channel_id",
        "compaction_strategy",
        "compaction_threshold_percent",
        "compaction_protect_first_n",
    },
    "model_channel": {"id", "name", "provider", "model", "is_auxiliary"},
    "chat_session": {"id", "agent_id", "compaction_version"},
    "dict_type": {"id", "name", "key"},
    "dict_info": {"id", "type_id", "name", "value"},
    "compaction_run": {
        "id",
        "session_id",
        "request_id",
        "reason",
        "status",
        "code",
        "tokens_before",
        "tokens_after",
        "removed_count",
        "pruned_count",
        "model",
        "input_tokens",
        "output_tokens",
        "durations",
        "worker",
    },
}

#: nullable or not, as docs/architecture.md, "Tables" says
NULLABLE = {
    ("message", "compacted_at"): True,
    ("message", "compacted_into_id"): True,
    ("message", "is_compaction_summary"): False,
    ("message", "pruned_at"): True,
    ("message", "seq"): False,
    ("agent", "auxiliary_model_channel_id"): True,
    ("agent", "compaction_strategy"): False,
    ("agent", "compaction_threshold_percent"): True,
    ("agent", "compaction_protect_first_n"): True,
    ("model_channel", "is_auxiliary"): False,
}

INDEXES = {
    ("session_id", "compacted_at"),
    ("session_id", "is_compaction_summary"),
    ("session_id", "tool_call_id"),
}

FOREIGN_KEYS = {
    ("message", ("session_id",), "chat_session", ("id",)),
    ("message", ("compacted_into_id",), "message", ("id",)),
    ("agent", ("auxiliary_model_channel_id",), "model_channel", ("id",)),
    ("chat_session", ("agent_id",), "agent", ("id",)),
    ("dict_info", ("type_id",), "dict_type", ("id",)),
    ("compaction_run", ("session_id",), "chat_session", ("id",)),
}

CHECKS = {
    "agent": {"ck_agent_threshold", "ck_agent_protect", "ck_agent_strategy"},
    "model_channel": {"ck_model_channel_provider"},
}


def test_the_tables_have_the_seeds_columns(migrated: Engine) -> None:
    inspector = inspect(migrated)
    for table, expected in COLUMNS.items():
        columns = {c["name"] for c in inspector.get_columns(table)}
        assert expected <= columns, f"{table} lacks {sorted(expected - columns)}"
    for (table, column), nullable in NULLABLE.items():
        (info,) = [c for c in inspector.get_columns(table) if c["name"] == column]
        assert info["nullable"] is nullable, f"{table}.{column}"


def test_the_message_indexes_exist(migrated: Engine) -> None:
    indexes = {tuple(i["column_names"]) for i in inspect(migrated).get_indexes("message")}
    assert indexes >= INDEXES


def test_the_foreign_keys_and_checks_exist(migrated: Engine) -> None:
    inspector = inspect(migrated)
    found = {
        (
            table,
            tuple(fk["constrained_columns"]),
            fk["referred_table"],
            tuple(fk["referred_columns"]),
        )
        for table in TABLES
        for fk in inspector.get_foreign_keys(table)
    }
    assert found >= FOREIGN_KEYS
    for table, names in CHECKS.items():
        assert {c["name"] for c in inspector.get_check_constraints(table)} >= names


def test_models_and_migrations_agree(migrated: Engine) -> None:
    assert differences(migrated) == []
