"""Session titles through HTTP (issue 23, "The console shows what happened, at once"): an
import names its session, ``PATCH /api/sessions/{id}`` renames it by the name rule, the list
and the session's answer carry ``title``; a refused title changes nothing."""

from __future__ import annotations

from tests.gateway.api_helpers import forty, imported
from tests.gateway.conftest import Gateway


def listed_titles(gateway: Gateway) -> dict[str, str | None]:
    sessions = gateway.client.get("/api/sessions").json()["sessions"]
    return {s["id"]: s["title"] for s in sessions}


def test_an_import_names_its_session_and_patch_renames_it(gateway: Gateway) -> None:
    imported(gateway, title="taubench airline 52")
    created = gateway.client.post("/api/sessions", json={"id": "plain"})
    assert created.status_code == 201
    assert listed_titles(gateway) == {"airline": "taubench airline 52", "plain": None}

    renamed = gateway.client.patch("/api/sessions/plain", json={"title": "迁移 orders 表"})
    assert renamed.status_code == 200, renamed.text
    assert renamed.json()["title"] == "迁移 orders 表" and renamed.json()["id"] == "plain"
    assert gateway.client.get("/api/sessions/plain").json()["title"] == "迁移 orders 表"

    cleared = gateway.client.patch("/api/sessions/airline", json={"title": None})
    assert cleared.status_code == 200 and cleared.json()["title"] is None
    assert listed_titles(gateway) == {"airline": None, "plain": "迁移 orders 表"}


def test_a_new_session_with_messages_takes_its_title(gateway: Gateway) -> None:
    answer = gateway.client.post(
        "/api/sessions", json={"id": "named", "title": "support call", "messages": forty()[:2]}
    )
    assert answer.status_code == 201
    assert gateway.client.get("/api/sessions/named").json()["title"] == "support call"


def test_a_bad_title_is_refused_and_changes_nothing(gateway: Gateway) -> None:
    assert gateway.client.post("/api/sessions", json={"id": "plain"}).status_code == 201
    gateway.client.patch("/api/sessions/plain", json={"title": "kept"})
    for bad in ("", "a" * 129, "line\nbreak", "nul\x00"):
        answer = gateway.client.patch("/api/sessions/plain", json={"title": bad})
        assert answer.status_code == 400, bad
        assert answer.json()["error"]["code"] == "invalid_request"
        assert "title" in answer.json()["error"]["message"]
    assert gateway.client.patch("/api/sessions/plain", json={}).status_code == 400
    assert (
        gateway.client.patch("/api/sessions/plain", json={"title": "x", "y": 1}).status_code == 400
    )
    assert gateway.client.get("/api/sessions/plain").json()["title"] == "kept"
    # an import with a bad title stores nothing
    refused = gateway.client.post(
        "/api/sessions/other/import", json=forty(), params={"title": "a" * 129}
    )
    assert refused.status_code == 400
    assert gateway.client.get("/api/sessions/other").status_code == 404


def test_renaming_a_missing_session_is_404(gateway: Gateway) -> None:
    answer = gateway.client.patch("/api/sessions/nobody", json={"title": "x"})
    assert answer.status_code == 404
    assert answer.json()["error"]["code"] == "session_not_found"
