"""Hostile entries on the request stream (worker/ingress.py; docs/architecture.md, "The job",
"Redis keys"): whatever a writer to Redis adds to ``compaction:requests``, a real ``compaction
ingress`` process acknowledges it and either enqueues it or dead-letters it with a reason,
answering ``compaction_failed`` where a session id can be read, and lives on to serve the next
entry. The exported JSON Schema and the validator agree on every payload here."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from functools import partial
from typing import Any, cast

import jsonschema
import pytest
from pydantic import ValidationError
from redis.typing import EncodableT, FieldT

from compaction.core.contract import CompactionRequested
from compaction.service.keys import dead_stream, events_stream, pending_key, requests_stream
from compaction.worker.ingress import GROUP
from tests.integration.process_helpers import Processes, Server, wait_for
from tests.integration.worker_helpers import load_schema
from tests.services import stream_entries


@dataclass(frozen=True)
class Entry:
    """A stream entry: JSON ``fields`` over a valid request, else a ``raw`` payload as it is
    (none: the entry has no ``payload`` field)."""

    name: str
    fields: dict[str, Any] | None = None
    raw: bytes | None = None
    #: whether the entry names a session that ``compaction_failed`` can answer
    readable: bool = True

    def payload(self, session_id: str) -> bytes | None:
        if self.fields is None:
            return self.raw
        request = {"sessionId": session_id, "reason": "manual", **self.fields}
        return json.dumps(request).encode()  # ensure_ascii spells a lone surrogate "\ud800"


REFUSED = [
    Entry("lone surrogate in sessionId", {"sessionId": "s-\ud800"}, readable=False),
    Entry("control character in sessionId", {"sessionId": "s-\x00"}, readable=False),
    Entry("lone surrogate in requestId", {"requestId": "r-\udc00"}),
    Entry("newline in requestId", {"requestId": "r-1\n"}),
    Entry("lone surrogate in focus", {"focus": "keep \ud800 this"}),
    Entry("requestedAt without offset", {"requestedAt": "2026-11-30T00:00:00"}),
    Entry("requestedAt a date", {"requestedAt": "2026-11-30"}),
    Entry("requestedAt a number", {"requestedAt": 1_764_460_800}),
    Entry("contextWindow a string", {"contextWindow": "5000"}),
    Entry("contextWindow a fraction", {"contextWindow": 5000.5}),
    Entry("v a boolean", {"v": True}),
    Entry("an unknown field with a huge name", {"x" * 100_000: 1}),
    Entry("a 1 MB focus", {"focus": "x" * 1_000_000}),
    Entry("not JSON", raw=b"{not json", readable=False),
    Entry("not an object", raw=b'["s1", "manual"]', readable=False),
    Entry("not UTF-8", raw=b'{"sessionId": "\xff", "reason": "manual"}', readable=False),
    Entry("no payload field", readable=False),
]
ACCEPTED = [
    Entry("requestId with a dot", {"requestId": "req.1"}),
    Entry("requestId with a colon and a slash", {"requestId": "gw:7/abc"}),
    Entry("sessionId beyond the BMP", {"sessionId": "s-\U0001f600"}),
    Entry("contextWindow an integral float", {"contextWindow": 5000.0}),
    Entry("requestedAt with an offset", {"requestedAt": "2026-11-30T08:00:00.5+08:00"}),
]


def xadd(rdb: Server, entry: Entry, session_id: str) -> str:
    payload = entry.payload(session_id)
    fields: dict[FieldT, EncodableT] = (
        {"payload": payload} if payload is not None else {"data": b"{}"}
    )
    return cast(bytes, rdb.client.xadd(requests_stream(rdb.names.prefix), fields)).decode()


def final_events(rdb: Server) -> dict[str, list[dict[str, Any]]]:
    """session id -> the ``compaction_failed`` events that answer it."""
    out: dict[str, list[dict[str, Any]]] = {}
    for _id, entry in stream_entries(rdb.client, events_stream(rdb.names.prefix)):
        event = json.loads(entry[b"event"])
        if event["type"] == "compaction_failed":
            out.setdefault(event["sessionId"], []).append(event)
    return out


def test_the_ingress_process_outlives_every_hostile_entry(
    rdb: Server, processes: Processes
) -> None:
    ingress = processes.command("ingress")
    prefix, run = rdb.names.prefix, uuid.uuid4().hex[:8]
    hostile: dict[str, tuple[Entry, str]] = {}
    for i, entry in enumerate([*REFUSED, *ACCEPTED]):
        session_id = f"s-{run}-{i}"
        hostile[xadd(rdb, entry, session_id)] = (entry, session_id)
        follower = f"{session_id}-next"  # a valid entry right after: is it still served?
        xadd(rdb, Entry("valid", {}), follower)
        wait_for(
            partial(rdb.client.get, pending_key(prefix, follower)),
            15,
            f"the entry after {entry.name!r} enqueued",
            ingress,
        )
    dead = {f[b"entry"].decode(): f for _id, f in stream_entries(rdb.client, dead_stream(prefix))}
    failed = final_events(rdb)
    for entry_id, (entry, session_id) in hostile.items():
        if entry in ACCEPTED:
            assert entry_id not in dead, entry.name
            continue
        letter = dead.get(entry_id)
        assert letter is not None, f"{entry.name}: not dead-lettered (entry ids: {list(dead)})"
        assert 0 < len(letter[b"reason"]) <= 300, entry.name
        assert len(letter[b"payload"]) <= 4_096, entry.name
        answers = failed.get(session_id, [])
        codes = [e["code"] for e in answers]
        assert codes == (["invalid_request"] if entry.readable else []), entry.name
    assert rdb.client.xpending(requests_stream(prefix), GROUP)["pending"] == 0
    assert rdb.client.xlen(requests_stream(prefix)) == 0  # handled entries are trimmed
    assert ingress.popen.poll() is None, ingress.tail()


VALIDATOR = jsonschema.Draft202012Validator(
    load_schema("compaction_requested.schema.json"),
    format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER,
)


@pytest.mark.parametrize(
    "entry",
    [e for e in [*REFUSED, *ACCEPTED] if e.name != "no payload field"],
    ids=lambda e: e.name,
)
def test_the_schema_and_the_validator_agree(entry: Entry) -> None:
    payload = entry.payload("s1")
    assert payload is not None
    try:
        CompactionRequested.model_validate_json(payload)
        by_model = True
    except ValidationError:
        by_model = False
    try:
        by_schema = VALIDATOR.is_valid(json.loads(payload))
    except ValueError:  # not JSON (or not UTF-8): no schema can accept it
        by_schema = False
    assert (by_model, by_schema) == ((entry in ACCEPTED),) * 2
