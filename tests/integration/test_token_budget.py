"""A fixed token budget instead of a percentage of the window (docs/architecture.md, "Settings"):
``COMPACTION_TOKEN_BUDGET`` and an agent's ``token_budget`` (over the system's), capped at the
window, the same threshold in the producers' check, the worker's run and the context stats;
``agent set --token-budget`` / ``--clear-token-budget`` and ``agent show`` saying where the
budget comes from. Real Redis and PostgreSQL; RQ's SimpleWorker runs the real job."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from compaction import estimate_messages_tokens
from compaction.core.contract import CompactionDone
from compaction.producers import trigger
from compaction.producers.context import Producers
from compaction.producers.relay import EventRelay
from compaction.producers.stats import session_stats
from compaction.service.events import EventPublisher
from compaction.worker.runtime import Runtime, install
from tests.fakes import TRANSCRIPTS, conversation
from tests.integration.producer_helpers import drain, queue

Command = Callable[..., tuple[int, str, str]]
WINDOW = 200_000
TRANSCRIPT = TRANSCRIPTS / "msa_deepseek-chat_pydicom-1139.json"


def with_settings(ctx: Producers, **values: Any) -> Producers:
    """The same gateway and worker, on a 200k window and ``values``."""
    settings = ctx.settings.model_copy(update={"context_window": WINDOW, **values})
    publisher = EventPublisher(ctx.redis, prefix=settings.channel_prefix)
    install(Runtime(settings=settings, store=ctx.store, redis=ctx.redis, publisher=publisher))
    return Producers(settings=settings, store=ctx.store, redis=ctx.redis)


def big_session(ctx: Producers, turns: int, agent_id: str | None = None) -> tuple[str, int]:
    """A session of ``turns`` tool turns (about 640 tokens each), and its tokens."""
    messages = conversation(turns, tool_chars=2_400)
    session_id = ctx.store.create_session(agent_id=agent_id, messages=messages)
    return session_id, estimate_messages_tokens(messages, ctx.estimator)


def test_a_session_over_the_budget_is_compacted_under_it(ctx: Producers) -> None:
    on_percent = with_settings(ctx)
    session_id, tokens = big_session(ctx, 95)
    assert 55_000 < tokens < 65_000
    percent = trigger.check_and_enqueue(on_percent, session_id)
    assert (percent.status, percent.threshold_tokens) == ("below_threshold", 140_000)

    budget = with_settings(ctx, token_budget=50_000)
    relay = EventRelay(session_id, ctx=budget)
    checked = trigger.check_and_enqueue(budget, session_id)
    assert (checked.status, checked.threshold_tokens) == ("enqueued", 50_000)
    assert checked.threshold_percent == 70  # the percent is still the system's, unused
    drain(budget)  # the worker's config agrees: an auto request it would skip under 140k

    events = list(relay.events(timeout=2.0))
    relay.close()
    done = [e for e in events if isinstance(e, CompactionDone)]
    assert len(done) == 1 and done[0].tokens_before >= 50_000 > done[0].tokens_after
    after = trigger.check_and_enqueue(budget, session_id)
    assert after.status == "below_threshold" and after.used_tokens < 50_000
    assert session_stats(budget, session_id)["thresholdTokens"] == 50_000


def test_the_budget_is_capped_at_the_window(ctx: Producers) -> None:
    over = with_settings(ctx, token_budget=300_000)
    session_id, _tokens = big_session(ctx, 2)
    assert trigger.check_and_enqueue(over, session_id).threshold_tokens == WINDOW


def test_an_agents_budget_overrides_the_systems(ctx: Producers) -> None:
    system = with_settings(ctx, token_budget=50_000)
    ctx.store.set_agent("tight", token_budget=30_000)
    ctx.store.set_agent("plain")
    tight, tokens = big_session(ctx, 60, agent_id="tight")
    plain, _tokens = big_session(ctx, 60, agent_id="plain")
    assert 30_000 < tokens < 50_000

    assert trigger.check_and_enqueue(system, plain).status == "below_threshold"
    checked = trigger.check_and_enqueue(system, tight)
    assert (checked.status, checked.threshold_tokens) == ("enqueued", 30_000)
    assert len(queue(ctx)) == 1
    assert session_stats(system, plain)["thresholdTokens"] == 50_000

    ctx.store.set_agent("tight", clear_token_budget=True)
    system.contexts.forget_agent("tight")
    assert system.contexts.resolve(tight).threshold_tokens == 50_000


def test_agent_set_and_show_say_where_the_budget_comes_from(
    command: Command, monkeypatch: pytest.MonkeyPatch
) -> None:
    status, out, err = command("agent", "set", "a1", "--token-budget", "30000")
    assert (status, err) == (0, "")
    assert "  token budget    30,000 tokens, capped at the window (the agent's own)" in out

    monkeypatch.setenv("COMPACTION_TOKEN_BUDGET", "80000")
    status, out, err = command("agent", "set", "a1", "--clear-token-budget", "--json")
    row = json.loads(out)
    assert row["tokenBudget"] is None
    assert row["effective"]["tokenBudget"] == {
        "value": 80_000,
        "source": "system",
        "setting": "COMPACTION_TOKEN_BUDGET",
    }
    _status, shown, _err = command("agent", "show", "a1")
    assert (
        "  token budget    80,000 tokens, capped at the window "
        "(the system setting COMPACTION_TOKEN_BUDGET=80000)"
    ) in shown


def test_agent_set_refuses_a_budget_under_the_minimum(command: Command) -> None:
    status, out, err = command("agent", "set", "a1", "--token-budget", "999")

    assert (status, out) == (1, "")
    assert err == (
        "compaction: error [invalid_request]: token budget 999 is out of range: at least 1000\n"
    )
    assert command("agent", "show", "a1")[0] == 1  # nothing was written


def test_stats_says_budget_when_one_applies(
    command: Command, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``stats`` names the budget when one sets the threshold, the percentage otherwise."""
    status, out, _err = command("import", str(TRANSCRIPT))
    assert status == 0
    session_id = out.strip()
    status, plain, err = command("stats", session_id)
    assert (status, err) == (0, "")
    assert "threshold 70% (140,000), compacted 0 times" in plain
    monkeypatch.setenv("COMPACTION_TOKEN_BUDGET", "50000")
    status, budget, _err = command("stats", session_id)
    assert status == 0 and "budget 50,000 tokens, compacted 0 times" in budget
    assert json.loads(command("stats", session_id, "--json")[1])["tokenBudget"] == 50_000
