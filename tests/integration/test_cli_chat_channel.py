"""``compaction channel remove`` of an agent's chat channel (docs/architecture.md, "Which
channel answers"): refused naming the agents that chat with it; with --force the agents' choice
is cleared (the column has no ON DELETE action) and the command says so, as text and as JSON."""

from __future__ import annotations

import json
from collections.abc import Callable

Command = Callable[..., tuple[int, str, str]]
CHANNEL = ["--provider", "openai-compatible", "--model", "writer-model", "--api-key", "sk-x-1"]


def test_removing_an_agents_chat_channel(command: Command) -> None:
    assert command("channel", "add", "writer-chat", *CHANNEL)[0] == 0
    assert command("channel", "add", "other-chat", *CHANNEL)[0] == 0
    for agent in ("editor", "writer"):
        status, _, err = command("agent", "set", agent, "--chat-channel", "writer-chat")
        assert status == 0, err

    status, out, err = command("channel", "remove", "writer-chat")
    assert (status, out) == (1, "")
    assert err.startswith("compaction: error [invalid_request]: ") and err.count("\n") == 1
    assert "agents editor, writer chat with it" in err and "--force" in err

    status, out, err = command("channel", "remove", "writer-chat", "--force")
    assert (status, err) == (0, "")
    assert "agents editor, writer: no chat channel now" in out
    for agent in ("editor", "writer"):
        shown = json.loads(command("agent", "show", agent, "--json")[1])
        assert shown["chatChannelId"] is None, shown

    assert command("agent", "set", "writer", "--chat-channel", "other-chat")[0] == 0
    status, out, _ = command("channel", "remove", "other-chat", "--force", "--json")
    assert status == 0 and json.loads(out)["chatAgentsReleased"] == ["writer"]
