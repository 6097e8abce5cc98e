"""``compaction stats`` on a real single-request tool loop (cli/sessions.py,
producers/stats.py): the tokens per segment (everything after the one request is loop), the
budget, and the last turn the gateway recorded; ``--json`` and the text form."""

from __future__ import annotations

import json
from collections.abc import Callable

from compaction.core.tokens import estimate_tokens
from compaction.store import Store
from compaction.store.token_stats import TokenStat
from tests.fakes import load_transcript

Command = Callable[..., tuple[int, str, str]]


def test_stats_split_a_tool_loop_and_show_the_last_turn(command: Command, store: Store) -> None:
    messages = load_transcript("msa_deepseek-chat_pydicom-1139")
    store.create_session("swe", model="deepseek-chat", messages=messages)
    tokens = {"system": 1, "history": 0, "loop": 2, "state": 3}
    store.record_token_stat(TokenStat("swe", tokens, 6, "enqueued", 5_000, "deepseek-chat"))

    status, out, err = command("stats", "swe", "--json")
    assert status == 0, err
    stats = json.loads(out)
    segments = stats["tokensBySegment"]
    request = estimate_tokens(messages[1])  # the only user message: the current state
    assert segments["system"] == estimate_tokens(messages[0]) > 0
    assert segments["history"] == 0 and segments["state"] == request
    assert segments["loop"] == stats["usedTokens"] - segments["system"] - request > 10_000
    assert stats["budgetTokens"] == stats["thresholdTokens"]
    latest = stats["latestTurn"]
    assert latest["decision"] == "enqueued" and latest["tokensBySegment"] == tokens
    assert stats["turns"] == [latest]

    status, out, err = command("stats", "swe")
    assert status == 0, err
    assert f"by segment: system {segments['system']:,}, history 0, loop {segments['loop']:,}" in out
    assert "last turn:  enqueued, ~6 tokens sent (budget 5,000)" in out
