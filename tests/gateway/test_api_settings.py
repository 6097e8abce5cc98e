"""Agent settings and channels through HTTP (docs/architecture.md, "Settings"): a key given as
``null`` clears a value back to the system's, and GET says where each value comes from; channels
added, listed, edited, made default and removed with keys masked in every answer, and the
command line's ``--force`` as ``?force=true``."""

from __future__ import annotations

from typing import Any

from tests.gateway.api_helpers import imported
from tests.gateway.conftest import Gateway

KEY = "sk-live-0123456789abcdefSECRET"
URL_SECRET = "https://user:hunter2@llm.example/v1"


def channel(gateway: Gateway, name: str, **fields: Any) -> dict[str, Any]:
    body = {"name": name, "provider": "openai", "model": "gpt-4o-mini", **fields}
    answer = gateway.client.post("/api/channels", json=body)
    assert answer.status_code == 201, answer.text
    row: dict[str, Any] = answer.json()
    return row


def put_agent(gateway: Gateway, agent: str, **body: Any) -> dict[str, Any]:
    answer = gateway.client.put(f"/api/agents/{agent}", json=body)
    assert answer.status_code == 200, answer.text
    shown: dict[str, Any] = answer.json()
    return shown


def test_agent_settings_set_then_cleared_back_to_the_system(gateway: Gateway) -> None:
    aux = channel(gateway, "aux", auxiliary=True)
    set_ = put_agent(
        gateway,
        "coder",
        thresholdPercent=80,
        protectFirstN=5,
        auxiliaryChannel=aux["id"],
        model="gpt-4o",
    )
    assert (set_["compactionThresholdPercent"], set_["compactionProtectFirstN"]) == (80, 5)
    effective = set_["effective"]
    assert effective["thresholdPercent"] == {
        "value": 80,
        "source": "agent",
        "setting": "COMPACTION_THRESHOLD_PERCENT",
    }
    assert effective["auxiliaryChannel"]["name"] == "aux"
    assert effective["auxiliaryChannel"]["source"] == "agent"
    assert gateway.client.get("/api/agents/coder").json() == set_

    # a session of the agent follows its threshold at once
    imported(gateway, agentId="coder")
    assert gateway.client.get("/api/sessions/airline").json()["thresholdPercent"] == 80

    cleared = put_agent(gateway, "coder", thresholdPercent=None, auxiliaryChannel=None)
    assert cleared["compactionThresholdPercent"] is None
    assert cleared["effective"]["thresholdPercent"]["source"] == "system"
    system = gateway.resources.settings.threshold_percent
    assert cleared["effective"]["thresholdPercent"]["value"] == system
    assert cleared["effective"]["auxiliaryChannel"]["source"] != "agent"
    assert cleared["compactionProtectFirstN"] == 5 and cleared["model"] == "gpt-4o"  # absent
    assert gateway.client.get("/api/agents/coder").json() == cleared
    assert gateway.client.get("/api/sessions/airline").json()["thresholdPercent"] == system
    assert gateway.client.get("/api/agents").json() == {"agents": ["coder"]}


def test_agent_refusals(gateway: Gateway) -> None:
    missing = gateway.client.get("/api/agents/ghost")
    assert missing.status_code == 404
    assert missing.json()["error"] == {"code": "not_found", "message": "agent 'ghost' not found"}
    for body, words in (
        ({"thresholdPercent": 33}, "out of range"),
        ({"protectFirstN": 0}, "out of range"),
        ({"compactionStrategy": "lossless"}, "strategy"),
        ({"auxiliaryChannel": 424242}, "no channel"),
        ({"threshold": 70}, "threshold"),  # an unknown key: a typo is not ignored
    ):
        answer = gateway.client.put("/api/agents/coder", json=body)
        assert answer.status_code == 400, body
        assert answer.json()["error"]["code"] == "invalid_request"
        assert words in answer.json()["error"]["message"], answer.json()
    plain = channel(gateway, "plain")  # not auxiliary: cannot write summaries
    refused = gateway.client.put("/api/agents/coder", json={"auxiliaryChannel": plain["name"]})
    assert refused.status_code == 400
    assert "not an auxiliary channel" in refused.json()["error"]["message"]
    assert gateway.client.get("/api/agents").json() == {"agents": []}  # nothing created


def test_channels_with_masked_keys(gateway: Gateway) -> None:
    added = channel(gateway, "main", apiKey=KEY, baseUrl=URL_SECRET, auxiliary=True, default=True)
    env = channel(gateway, "by-env", apiKeyEnv="OPENAI_API_KEY")
    assert added["apiKey"] == "sk-…CRET"  # store.records.mask
    assert "hunter2" not in added["baseUrl"]
    assert (added["auxiliary"], added["default"]) == (True, True)
    assert (env["apiKey"], env["apiKeyEnv"], env["default"]) == (None, "OPENAI_API_KEY", False)
    listed = gateway.client.get("/api/channels")
    assert listed.json() == {"channels": [added, env]}

    renamed = gateway.client.patch(
        f"/api/channels/{env['id']}", json={"name": "env2", "apiKey": KEY, "baseUrl": None}
    )
    assert renamed.status_code == 200
    assert renamed.json()["name"] == "env2" and renamed.json()["apiKeyEnv"] is None
    forgotten = gateway.client.patch("/api/channels/env2", json={"apiKey": None})
    assert (forgotten.json()["apiKey"], forgotten.json()["apiKeyEnv"]) == (None, None)
    made = gateway.client.patch("/api/channels/env2", json={"auxiliary": True})
    assert made.json()["auxiliary"] is True
    default = gateway.client.post("/api/channels/env2/default")
    assert default.status_code == 200 and default.json()["default"] is True
    rows = gateway.client.get("/api/channels").json()["channels"]
    assert [r["default"] for r in rows] == [False, True]
    everything = gateway.client.get("/api/channels").text + renamed.text + listed.text
    assert KEY not in everything and "hunter2" not in everything


def test_channel_refusals_and_force(gateway: Gateway) -> None:
    aux = channel(gateway, "aux", auxiliary=True, default=True)
    put_agent(gateway, "coder", auxiliaryChannel="aux")
    taken = gateway.client.post(
        "/api/channels", json={"name": "aux", "provider": "openai", "model": "m"}
    )
    assert taken.status_code == 409 and taken.json()["error"]["code"] == "conflict"
    unknown_provider = gateway.client.post(
        "/api/channels", json={"name": "x", "provider": "acme", "model": "m"}
    )
    assert unknown_provider.status_code == 400
    assert gateway.client.delete("/api/channels/nope").status_code == 404
    assert gateway.client.patch("/api/channels/nope", json={"model": "m"}).status_code == 404

    unmark = gateway.client.patch("/api/channels/aux", json={"auxiliary": False})
    refused = gateway.client.delete(f"/api/channels/{aux['id']}")
    for answer in (unmark, refused):
        assert answer.status_code == 409
        error = answer.json()["error"]
        assert error["code"] == "conflict" and "agent coder uses it" in error["message"]
        assert "default auxiliary channel" in error["message"]
    assert gateway.client.get("/api/channels").json()["channels"][0]["auxiliary"] is True

    removed = gateway.client.delete(f"/api/channels/{aux['id']}", params={"force": "true"})
    assert removed.status_code == 200
    assert removed.json() == {
        "removed": {**aux, "default": False},
        "agents": ["coder"],
        "defaultCleared": True,
        "chatAgents": [],
    }
    assert gateway.client.get("/api/channels").json() == {"channels": []}
    agent = gateway.client.get("/api/agents/coder").json()
    assert agent["auxiliaryModelChannelId"] is None
    assert agent["effective"]["auxiliaryChannel"]["source"] == "none"
