"""The exported JSON Schemas (``schemas/``, docs/architecture.md, "Events"): the files are up to
date, the job's payload matches its schema, and the checker the job tests rely on refuses what
a schema forbids."""

from __future__ import annotations

import json

import pytest

from compaction.cli.schemas import render
from compaction.core.contract import CompactionRequested, CompactionSkipped, json_schemas
from tests.integration.worker_helpers import SCHEMAS, assert_valid


def test_schema_files_are_up_to_date() -> None:
    expected = json_schemas()
    assert sorted(p.name for p in SCHEMAS.glob("*.json")) == sorted(expected)
    for name, schema in expected.items():
        assert (SCHEMAS / name).read_text(encoding="utf-8") == render(schema), (
            f"schemas/{name} is stale: run `compaction schemas`"
        )


@pytest.mark.parametrize(
    "request_",
    [
        CompactionRequested(session_id="s1", reason="auto"),
        CompactionRequested(
            session_id="s" * 128,
            reason="manual",
            request_id="r" * 64,
            model="gpt-4o",
            context_window=128_000,
            focus="keep the schema",
        ),
    ],
    ids=["minimal", "full"],
)
def test_job_payload_matches_its_schema(request_: CompactionRequested) -> None:
    wire = request_.to_wire()
    assert_valid(wire, "compaction_requested.schema.json")
    assert CompactionRequested.model_validate(wire).to_wire() == wire
    assert_valid(json.loads(request_.to_json()), "compaction_requested.schema.json")


def test_schema_checker_refuses_bad_events() -> None:
    """The checker the teardown relies on does refuse what the schema forbids."""
    good = CompactionSkipped(session_id="s1", code="lock_held").to_wire()
    assert_valid(good, "event.schema.json")
    for bad in (
        {**good, "code": "nope"},
        {**good, "v": 2},
        {**good, "extra": 1},
        {k: v for k, v in good.items() if k != "sessionId"},
        {**good, "type": "compaction_paused"},
        {**good, "timestamp": "soon"},
    ):
        with pytest.raises(AssertionError):
            assert_valid(bad, "event.schema.json")
