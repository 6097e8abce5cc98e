"""The gate's settings through ``compaction agent set|show`` (docs/architecture.md, "The gate"):
``--auto-compact``, ``--warn-percent`` and ``--chat-channel NAME|none``, each shown with where it
comes from; a warning level at or over the threshold refused with ``invalid_config`` and
nothing changed; and the producers' check of a session of that agent answers as its mode says
(``asked`` past the threshold, compacted first past the window)."""

from __future__ import annotations

import fakeredis
from sqlalchemy import Engine

from compaction.producers.context import Producers
from compaction.service.settings import Settings
from compaction.store import Store, make_sessionmaker
from tests.fakes import conversation
from tests.integration.helpers import Command, ok, shown


def test_agent_set_auto_compact_ask(command: Command, engine: Engine) -> None:
    out = ok(command, "agent", "set", "a1", "--auto-compact", "ask", "--warn-percent", "55")
    assert "  auto compact    ask (the agent's own)" in out
    assert "  warning at      55% (the agent's own)" in out
    row = shown(command, "a1")
    assert (row["autoCompact"], row["warnPercent"]) == ("ask", 55)
    assert row["effective"]["autoCompact"] == {
        "value": "ask",
        "source": "agent",
        "setting": "COMPACTION_AUTO_COMPACT",
    }
    # the producers' check of a session of this agent, past its threshold: asked, not queued
    store = Store(make_sessionmaker(engine))
    settings = Settings(
        _env_file=None,
        database_url=engine.url.render_as_string(hide_password=False),
        context_window=4_000,
    )
    producers = Producers(settings=settings, store=store, redis=fakeredis.FakeRedis())
    over = store.create_session("s-over", agent_id="a1", messages=conversation(20))
    assert producers.check_and_enqueue(over).status == "asked"
    full = store.create_session("s-full", agent_id="a1", messages=conversation(24))
    assert producers.check_and_enqueue(full).status == "enqueued"  # the hard limit


def test_clearing_goes_back_to_the_system(command: Command) -> None:
    ok(command, "agent", "set", "a1", "--auto-compact", "off", "--warn-percent", "50")
    out = ok(command, "agent", "set", "a1", "--clear-auto-compact", "--clear-warn-percent")
    assert "  auto compact    on (the system setting COMPACTION_AUTO_COMPACT=on)" in out
    assert "  warning at      10 points below the threshold (COMPACTION_WARN_PERCENT unset)" in out
    assert (shown(command, "a1")["autoCompact"], shown(command, "a1")["warnPercent"]) == (
        None,
        None,
    )


def test_a_warning_at_the_threshold_is_refused(command: Command) -> None:
    ok(command, "agent", "set", "a1", "--warn-percent", "40")
    before = shown(command, "a1")
    status, out, err = command("agent", "set", "a1", "--warn-percent", "70")
    assert (status, out) == (1, "")
    assert err.strip() == (
        "compaction: error [invalid_config]: warning level 70% must be below the threshold of "
        "70%: the warning comes before the automatic compaction"
    )
    status, _, err = command("agent", "set", "a1", "--threshold", "40")  # under its level
    assert status == 1 and "[invalid_config]" in err
    assert shown(command, "a1") == before


def test_chat_channel_by_name_and_none(command: Command) -> None:
    ok(command, "channel", "add", "chat", "--provider", "openai", "--model", "gpt-x")
    ok(command, "channel", "add", "aux", "--provider", "openai", "--model", "m", "--auxiliary")
    out = ok(command, "agent", "set", "a1", "--chat-channel", "chat")
    assert "  chat channel    channel 'chat' (id 1), the agent's own" in out
    assert shown(command, "a1")["chatChannel"] == {"id": 1, "name": "chat"}
    status, _, err = command("agent", "set", "a1", "--chat-channel", "aux")
    assert status == 1 and "[invalid_request]" in err and "not auxiliary" in err
    ok(command, "agent", "set", "a1", "--chat-channel", "none")
    assert shown(command, "a1")["chatChannel"] is None
