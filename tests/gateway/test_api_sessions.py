"""Sessions through HTTP (docs/architecture.md, "The gateway"): create, import a real transcript
with the command line's rules, list with figures, the three history views, the context stats at
both paths, and their refusals (404, 409, 400 with nothing stored)."""

from __future__ import annotations

from tests.gateway.api_helpers import HISTORY_KEYS, forty, imported
from tests.gateway.conftest import Gateway


def test_import_a_real_transcript_then_its_history_in_three_views(gateway: Gateway) -> None:
    assert imported(gateway, agentId="support") == {"id": "airline", "imported": 40}
    views = {}
    for view in ("compacted", "display", "full"):
        answer = gateway.client.get("/api/sessions/airline/history", params={"view": view})
        assert answer.status_code == 200
        body = answer.json()
        assert (body["sessionId"], body["view"]) == ("airline", view)
        views[view] = body["messages"]
    assert views["compacted"] == views["display"] == views["full"]  # nothing compacted yet
    rows = views["compacted"]
    assert len(rows) == 40 and set(rows[0]) == HISTORY_KEYS
    assert [r["role"] for r in rows] == [m["role"] for m in forty()]
    assert rows[1]["content"] == forty()[1]["content"]
    index, called = next((i, r) for i, r in enumerate(rows) if r["toolCalls"])
    call = forty()[index]["tool_calls"][0]
    assert called["toolCalls"][0]["name"] == call["name"] == "get_user_details"
    assert rows[index + 1]["toolCallId"] == call["id"]
    default = gateway.client.get("/api/sessions/airline/history").json()
    assert default["view"] == "compacted" and default["messages"] == rows
    # the rows the command line prints with history --json (producers.views), camelCase
    assert gateway.client.get("/api/agents/support").status_code == 200  # created with it


def test_the_session_list_shows_figures_newest_first(gateway: Gateway) -> None:
    imported(gateway)
    created = gateway.client.post(
        "/api/sessions",
        json={"id": "fresh", "agentId": "a1", "model": "gpt-4o", "messages": forty()[:2]},
    )
    assert created.status_code == 201 and created.json() == {"id": "fresh"}
    listed = gateway.client.get("/api/sessions").json()["sessions"]
    assert [s["id"] for s in listed] == ["fresh", "airline"]
    fresh, airline = listed
    assert fresh["agentId"] == "a1" and fresh["model"] == "gpt-4o"
    assert fresh["messages"] == 2 and fresh["maxTokens"] == 128_000  # gpt-4o's window
    stats = gateway.client.get("/api/sessions/airline/context-stats").json()
    assert airline["messages"] == stats["messages"] == 40
    for key in ("usedTokens", "maxTokens", "percent", "thresholdPercent", "compactions"):
        assert airline[key] == stats[key], key
    assert airline["compactions"] == 0 and airline["usedTokens"] > 1_000
    assert airline["createdAt"] < fresh["createdAt"]
    assert gateway.client.get("/api/sessions/airline").json() == airline
    assert gateway.client.get("/api/sessions", params={"limit": 1}).json()["sessions"] == [fresh]


def test_a_new_session_gets_an_id_and_a_taken_one_is_409(gateway: Gateway) -> None:
    answer = gateway.client.post("/api/sessions", json={})
    assert answer.status_code == 201
    new_id = answer.json()["id"]
    assert len(new_id) == 32
    again = gateway.client.post("/api/sessions", json={"id": new_id})
    assert again.status_code == 409
    assert again.json()["error"] == {
        "code": "conflict",
        "message": f"session {new_id!r} already exists",
    }
    unknown = gateway.client.post("/api/sessions", json={"id": "x", "agent": "typo"})
    assert unknown.status_code == 400 and "agent" in unknown.json()["error"]["message"]


def test_context_stats_at_both_paths(gateway: Gateway) -> None:
    imported(gateway)
    stats = gateway.client.get("/api/sessions/airline/context-stats").json()
    assert set(stats) == {
        "sessionId",
        "messages",
        "usedTokens",
        "maxTokens",
        "percent",
        "thresholdPercent",
        "thresholdTokens",
        "budgetTokens",
        "tokenBudget",
        "estimated",
        "tokensByRole",
        "tokensBySegment",
        "pinnedTokens",
        "compactions",
        "lastRun",
        "latestTurn",
        "turns",
        "warning",  # the gate's (docs/architecture.md, "The gate"): null under the level
        "compactionCost",  # the receipts' (docs/architecture.md, "Receipt")
        "auxTokens",
    }
    assert stats["sessionId"] == "airline" and stats["lastRun"] is None
    assert stats["compactionCost"] is None and stats["auxTokens"] == {"input": 0, "output": 0}
    assert stats["warning"] is None
    assert stats["latestTurn"] is None and stats["turns"] == []  # no model call yet
    assert stats["budgetTokens"] == stats["thresholdTokens"]
    assert stats["tokenBudget"] is None  # the percentage of the window applies
    assert sum(stats["tokensByRole"].values()) == stats["usedTokens"]
    segments = stats["tokensBySegment"]
    assert set(segments) == {"system", "history", "loop", "state"}
    assert sum(segments.values()) == stats["usedTokens"]
    assert segments["system"] == stats["tokensByRole"]["system"] > 0
    assert segments["history"] > 0 and segments["state"] > 0
    v1 = gateway.client.get("/api/v1/agent/context-stats", params={"conversation_id": "airline"})
    assert v1.status_code == 200 and v1.json() == stats
    missing = gateway.client.get("/api/v1/agent/context-stats")
    assert missing.status_code == 400 and missing.json()["error"]["code"] == "invalid_request"


def test_an_import_is_refused_whole_with_the_command_lines_rules(gateway: Gateway) -> None:
    imported(gateway)
    # a tool result answering no call: the CLI's import refuses it, nothing stored
    orphan = [{"role": "tool", "tool_call_id": "nobody", "content": "late"}]
    refused = gateway.client.post("/api/sessions/airline/import", json=orphan)
    assert refused.status_code == 400
    error = refused.json()["error"]
    assert error["code"] == "invalid_request" and error["message"].endswith("nothing stored")
    not_a_list = gateway.client.post("/api/sessions/airline/import", json={"role": "user"})
    assert not_a_list.status_code == 400
    bad_json = gateway.client.post(
        "/api/sessions/airline/import",
        content=b"[{",
        headers={"Content-Type": "application/json"},
    )
    assert bad_json.status_code == 400
    assert gateway.client.get("/api/sessions/airline").json()["messages"] == 40
    more = [{"role": "user", "content": "and my seat?"}]
    appended = gateway.client.post("/api/sessions/airline/import", json=more)
    assert appended.json() == {"id": "airline", "imported": 1}
    rows = gateway.client.get("/api/sessions/airline/history").json()["messages"]
    assert len(rows) == 41 and rows[-1]["content"] == "and my seat?"


def test_an_unknown_session_is_404_everywhere(gateway: Gateway) -> None:
    for path in (
        "/api/sessions/nope",
        "/api/sessions/nope/history",
        "/api/sessions/nope/context-stats",
        "/api/sessions/nope/runs",
        "/api/v1/agent/context-stats?conversation_id=nope",
    ):
        answer = gateway.client.get(path)
        assert answer.status_code == 404, path
        assert answer.json() == {
            "error": {"code": "session_not_found", "message": "session 'nope' not found"}
        }
    compact = gateway.client.post("/api/sessions/nope/compact", json={})
    assert compact.status_code == 404
    view = gateway.client.get("/api/sessions/nope/history", params={"view": "raw"})
    assert view.status_code == 400  # the view is checked first
