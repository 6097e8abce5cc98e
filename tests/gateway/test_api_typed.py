"""Typed answers (docs/architecture.md, "The gateway"): every success answer the committed
``docs/openapi.json`` documents has a schema that names its keys, and every route's actual
answers match the schema documented for their operation and status. The round trip calls every
operation of the app and fails naming the ones it did not call: a new route comes with its
answer checked here."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from compaction.gateway.openapi import COMMITTED, document
from tests.gateway.api_helpers import forty
from tests.gateway.conftest import Gateway
from tests.gateway.realtime_helpers import chat_channel, event_stream
from tests.llm_server import FakeLLM, Reply

ROOT = Path(__file__).resolve().parents[2]
DOC: dict[str, Any] = json.loads((ROOT / COMMITTED).read_text(encoding="utf-8"))
#: where the committed document's own ``$ref``s (``#/components/...``) resolve
DOC_URI = "urn:compaction:openapi"
REGISTRY: Registry[Any] = Registry().with_resource(DOC_URI, DRAFT202012.create_resource(DOC))

Operation = tuple[str, str]  # (path template, method)


def operations(doc: dict[str, Any]) -> dict[Operation, dict[str, Any]]:
    return {
        (path, method): operation
        for path, methods in doc["paths"].items()
        for method, operation in methods.items()
    }


def component(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema a ``#/components/schemas/...`` reference names, or the schema itself."""
    ref = schema.get("$ref")
    if ref is None:
        return schema
    name = ref.removeprefix("#/components/schemas/")
    found: dict[str, Any] = DOC["components"]["schemas"][name]
    return found


def test_every_success_answer_names_its_keys() -> None:
    free: list[str] = []
    for (path, method), operation in operations(DOC).items():
        success = {s: r for s, r in operation["responses"].items() if s.startswith("2")}
        assert success, (path, method)
        for status, response in success.items():
            for media, content in response["content"].items():
                where = f"{method.upper()} {path} {status} {media}"
                schema = content.get("schema")
                if schema is None:
                    free.append(f"{where}: no schema")
                elif media == "application/json":
                    target = component(schema)
                    if "$ref" not in schema and "properties" not in schema:
                        free.append(f"{where}: neither a component nor properties")
                    elif target.get("additionalProperties") is True or not target.get("properties"):
                        free.append(f"{where}: free-form")
    assert not free, free


def _escaped(part: str) -> str:
    return part.replace("~", "~0").replace("/", "~1")


class Checked:
    """An ``httpx`` response hook: each answer is validated against the schema the committed
    document gives its operation, status and media type (an undocumented one fails), and its
    operation and status are recorded."""

    def __init__(self) -> None:
        self.templates = [
            (re.compile(re.sub(r"\{[^}]+\}", "[^/]+", path)), path, method)
            for path, method in operations(DOC)
        ]
        self.seen: set[tuple[str, str, str]] = set()

    def operation(self, request: httpx.Request) -> Operation:
        method = request.method.lower()
        found = [
            (path, m)
            for pattern, path, m in self.templates
            if m == method and pattern.fullmatch(request.url.path)
        ]
        assert len(found) == 1, f"{request.method} {request.url.path}: documented as {found}"
        return found[0]

    def schema(self, operation: Operation, status: str, media: str) -> dict[str, Any]:
        path, method = operation
        responses = DOC["paths"][path][method]["responses"]
        assert status in responses, f"{method.upper()} {path}: status {status} undocumented"
        content = responses[status]["content"]
        assert media in content, f"{method.upper()} {path} {status}: {media} undocumented"
        parts = ("paths", path, method, "responses", status, "content", media, "schema")
        return {"$ref": f"{DOC_URI}#/" + "/".join(_escaped(p) for p in parts)}

    def validate(self, value: object, schema: dict[str, Any]) -> None:
        Draft202012Validator(
            schema, registry=REGISTRY, format_checker=Draft202012Validator.FORMAT_CHECKER
        ).validate(value)

    def __call__(self, response: httpx.Response) -> None:
        operation = self.operation(response.request)
        status = str(response.status_code)
        media = response.headers["content-type"].split(";")[0]
        schema = self.schema(operation, status, media)
        if media == "application/json":  # a stream is read, and checked, by its test
            response.read()
            self.validate(response.json(), schema)
        self.seen.add((*operation, status))


@pytest.fixture
def checked(gateway: Gateway) -> Iterator[Checked]:
    hook = Checked()
    gateway.client.event_hooks["response"].append(hook)
    yield hook
    gateway.client.event_hooks["response"].remove(hook)


def ok(answer: httpx.Response, status: int = 200) -> dict[str, Any]:
    assert answer.status_code == status, answer.text
    body: dict[str, Any] = answer.json()
    return body


def test_every_route_answers_as_documented(
    gateway: Gateway, fake_llm: FakeLLM, checked: Checked
) -> None:
    client = gateway.client
    assert ok(client.get("/healthz")) == {"status": "ok"}

    # sessions: one with a conversation model, one with a real transcript
    chat_channel(gateway, fake_llm)
    gateway.auxiliary(fake_llm)
    created = client.post(
        "/api/sessions",
        json={
            "id": "typed",
            "agentId": "typed-agent",
            "model": "chat-1",
            "messages": [{"role": "system", "content": "Be brief."}],
        },
    )
    assert ok(created, 201) == {"id": "typed"}
    assert ok(client.post("/api/sessions/airline/import", json=forty()))["imported"] == 40
    assert {s["id"] for s in ok(client.get("/api/sessions"))["sessions"]} == {"typed", "airline"}
    assert ok(client.get("/api/sessions/airline"))["messages"] == 40
    assert ok(client.patch("/api/sessions/airline", json={"title": "a"}))["title"] == "a"

    # a turn: the reply is a history row, camelCase like the history's
    fake_llm.script(Reply(text="Typed reply."))
    turn = ok(client.post("/api/sessions/typed/messages", json={"content": "Hello?"}))
    assert turn["reply"]["content"] == "Typed reply." and turn["reply"]["toolCalls"] == []
    assert ok(client.get("/api/sessions/typed/chat-channel"))["source"] == "model"
    stats = ok(client.get("/api/sessions/typed/context-stats"))
    assert stats["latestTurn"]["usage"]["outputTokens"] > 0
    assert ok(client.get("/api/v1/agent/context-stats", params={"conversation_id": "typed"}))

    # a compaction, its rows in every view, its run, and its restore
    fake_llm.script(Reply())
    assert ok(client.post("/api/sessions/airline/compact", json={"focus": "refund"}), 202)
    gateway.drain()
    rows = {
        name: ok(client.get("/api/sessions/airline/history", params={"view": name}))["messages"]
        for name in ("compacted", "display", "full")
    }
    assert any(r["isCompactionSummary"] for r in rows["compacted"])
    assert any(r["compactedAt"] and r["compactedIntoId"] for r in rows["full"])
    assert any(r["metadata"] for r in rows["display"])
    [run] = ok(client.get("/api/sessions/airline/runs"))["runs"]
    assert ok(client.get(f"/api/runs/{run['id']}")) == run
    assert ok(client.get("/api/sessions/airline/context-stats"))["lastRun"]["id"] == run["id"]
    # a recall of the compacted originals (docs/architecture.md, "Recall")
    recalled = ok(client.get("/api/sessions/airline/recall", params={"q": "refund"}))
    assert recalled["query"] == "refund" and recalled["matched"] >= len(recalled["results"])
    assert ok(client.post(f"/api/runs/{run['id']}/restore"))["status"] == "restored"

    # a review's draft (docs/architecture.md, "Review"): read, edited, discarded, regenerated,
    # the new one applied, its run undone
    assert ok(client.post("/api/sessions/airline/compact", json={"review": True}), 202)
    gateway.drain()
    [draft] = ok(client.get("/api/sessions/airline/drafts"))["drafts"]
    url = f"/api/drafts/{draft['id']}"
    assert ok(client.get(url)) == draft
    assert ok(client.put(url, json={"summary": "Edited."}))["edited"]
    assert ok(client.post(f"{url}/discard"))["status"] == "discarded"
    assert ok(client.post(f"{url}/regenerate", json={"focus": "bags"}), 202)
    gateway.drain()
    newer = ok(client.get("/api/sessions/airline/drafts"))["drafts"][0]
    applied = ok(client.post(f"/api/drafts/{newer['id']}/apply"))
    assert applied["draft"]["status"] == "applied"
    assert ok(client.post(f"/api/runs/{applied['runId']}/restore"))["status"] == "restored"

    # a pin and an unpin (docs/architecture.md, "Pins")
    pin = f"/api/sessions/airline/messages/{rows['compacted'][5]['id']}/pin"
    assert ok(client.post(pin))["pinned"] and not ok(client.delete(pin))["pinned"]

    # agents
    assert "typed-agent" in ok(client.get("/api/agents"))["agents"]
    put = ok(client.put("/api/agents/typed-agent", json={"thresholdPercent": 60}))
    assert put["effective"]["thresholdPercent"] == {
        "value": 60,
        "source": "agent",
        "setting": "COMPACTION_THRESHOLD_PERCENT",
    }
    assert ok(client.get("/api/agents/typed-agent")) == put

    # channels: added, edited, made the default, removed
    added = client.post(
        "/api/channels",
        json={"name": "typed", "provider": "openai", "model": "m", "apiKey": "sk-typed-0123456789"},
    )
    assert ok(added, 201)["apiKey"] != "sk-typed-0123456789"
    assert ok(client.patch("/api/channels/typed", json={"auxiliary": True}))["auxiliary"]
    assert ok(client.post("/api/channels/typed/default"))["default"]
    assert len(ok(client.get("/api/channels"))["channels"]) == 3
    removed = ok(client.delete("/api/channels/typed", params={"force": "true"}))
    assert removed["defaultCleared"] and removed["removed"]["name"] == "typed"

    # a refusal answers as documented too
    assert client.get("/api/runs/999999").status_code == 404

    # the events: a stream, its first comment a string as documented
    with event_stream(gateway, "typed") as stream:
        checked.validate(
            stream.comments[0],
            checked.schema(
                ("/api/sessions/{session_id}/events", "get"), "200", "text/event-stream"
            ),
        )

    successes = {
        (path, method, status)
        for (path, method), operation in operations(document()).items()
        for status in operation["responses"]
        if status.startswith("2")
    }
    missed = sorted(f"{m.upper()} {p} {s}" for p, m, s in successes - checked.seen)
    assert not missed, f"routes no typed test called: {missed}"
