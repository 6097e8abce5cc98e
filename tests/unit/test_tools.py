"""The recall tool's definitions and its call handling (``compaction.tools``;
docs/architecture.md, "Recall"): each provider's shape, and bad calls answered as text."""

from __future__ import annotations

from typing import Any, cast

import pytest

from compaction.core.errors import SessionNotFound
from compaction.producers.context import Producers
from compaction.tools import RECALL, recall_tool, run_tool_call


class FakeProducers:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, int]] = []

    def recall(self, session_id: str, query: str, max_tokens: int) -> dict[str, Any]:
        if session_id == "gone":
            raise SessionNotFound("session 'gone' not found")
        self.calls.append((session_id, query, max_tokens))
        hit = {"seq": 7, "role": "tool", "toolName": "bash", "content": "ok"}
        return {"query": query, "matched": 1, "results": [hit]}


def call(fake: FakeProducers, arguments: Any, name: str = RECALL, session: str = "s") -> str:
    return run_tool_call(cast(Producers, fake), session, name, arguments)


def test_each_providers_shape() -> None:
    openai = recall_tool("openai")
    assert openai["type"] == "function" and openai["function"]["name"] == RECALL
    assert openai["function"]["parameters"]["required"] == ["query"]
    anthropic = recall_tool("anthropic")
    assert anthropic["name"] == RECALL and anthropic["input_schema"]["required"] == ["query"]
    with pytest.raises(ValueError, match="unknown provider"):
        recall_tool(cast(Any, "gemini"))


def test_a_call_is_answered_from_recall() -> None:
    fake = FakeProducers()
    text = call(fake, '{"query": "deploy key", "max_tokens": 300}')
    assert fake.calls == [("s", "deploy key", 300)]
    assert "[message 7, tool (bash)]\nok" in text
    call(fake, {"query": "x", "max_tokens": True})  # not a number: the default budget
    assert fake.calls[-1][2] == 2_000


@pytest.mark.parametrize(
    ("arguments", "name", "session", "said"),
    [
        ("{not json", RECALL, "s", "not a JSON object"),
        ('{"q": "x"}', RECALL, "s", '{"query"'),
        ('{"query": "x"}', "shell", "s", "unknown tool 'shell'"),
        ('{"query": "x"}', RECALL, "gone", "session 'gone' not found"),
    ],
)
def test_bad_calls_are_answered_as_errors(
    arguments: str, name: str, session: str, said: str
) -> None:
    text = call(FakeProducers(), arguments, name, session)
    assert text.startswith("error: ") and said in text
