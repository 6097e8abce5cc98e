"""The OpenAPI document (docs/architecture.md, "The gateway"): the committed
``docs/openapi.json`` is the app's own (regenerate it with ``python -m compaction.gateway.openapi >
docs/openapi.json``), every ``/api`` operation declares the bearer token, and ``/docs``
serves it without a token."""

from __future__ import annotations

import json
from pathlib import Path

from compaction.gateway.openapi import COMMITTED, document, render
from tests.gateway.conftest import Gateway

ROOT = Path(__file__).resolve().parents[2]


def test_the_committed_document_is_the_apps() -> None:
    committed = (ROOT / COMMITTED).read_text(encoding="utf-8")
    generated = render(document())
    assert json.loads(committed) == json.loads(generated), (
        f"{COMMITTED} drifted from the app: python -m compaction.gateway.openapi > {COMMITTED}"
    )
    assert committed == generated


def test_every_api_operation_needs_the_token_and_says_its_errors() -> None:
    doc = document()
    assert doc["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    operations = {
        (path, method): operation
        for path, methods in doc["paths"].items()
        for method, operation in methods.items()
        if path.startswith("/api/")
    }
    assert ("/api/sessions/{session_id}/compact", "post") in operations
    assert ("/api/v1/agent/context-stats", "get") in operations
    for (path, method), operation in operations.items():
        assert operation["security"] == [{"bearer": []}], (path, method)
    compact = operations["/api/sessions/{session_id}/compact", "post"]
    assert compact["operationId"] == "compact"
    assert {"202", "400", "401", "404"} <= set(compact["responses"])
    assert "security" not in doc["paths"]["/healthz"]["get"]


def test_docs_are_served_without_the_token(gateway: Gateway) -> None:
    with gateway.anonymous() as anonymous:
        page = anonymous.get("/docs")
        served = anonymous.get("/openapi.json")
    assert page.status_code == 200 and "swagger" in page.text.lower()
    assert served.status_code == 200
    assert served.json()["paths"] == document()["paths"]


def test_the_document_lists_the_answer_to_invalid_input_the_app_sends(gateway: Gateway) -> None:
    """Invalid input is 400 ``invalid_request`` (one error shape), never FastAPI's 422: the
    document lists no 422 and no schema of FastAPI's own validation error."""
    doc = document()
    for path, methods in doc["paths"].items():
        for method, operation in methods.items():
            assert "422" not in operation["responses"], (path, method)
    assert "HTTPValidationError" not in doc["components"]["schemas"]

    answer = gateway.client.put("/api/agents/coder", json={"thresholdPercent": "high"})

    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "invalid_request"
    assert "400" in doc["paths"]["/api/agents/{agent_id}"]["put"]["responses"]
