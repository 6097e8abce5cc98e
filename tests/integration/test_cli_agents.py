"""``compaction agent set|show`` through ``cli.main`` (docs/architecture.md, "Settings"): a value
left blank or cleared is the system setting's, and both commands say where each value comes from
(the agent's own, ``COMPACTION_THRESHOLD_PERCENT`` and ``COMPACTION_PROTECT_FIRST_N``, the
default channel, none), as text and in ``--json``'s ``effective``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.helpers import Command, ok, shown


def test_a_new_agent_shows_the_system_settings_and_the_default_channel(
    command: Command, monkeypatch: pytest.MonkeyPatch
) -> None:
    ok(command, "channel", "add", "aux", "--provider", "openai", "--model", "m", "--auxiliary")
    ok(command, "channel", "default", "aux")
    monkeypatch.setenv("COMPACTION_THRESHOLD_PERCENT", "55")

    out = ok(command, "agent", "set", "a1")
    row = shown(command, "a1")

    assert out.splitlines()[:5] == [
        "agent a1",
        "  threshold       55% (the system setting COMPACTION_THRESHOLD_PERCENT=55)",
        "  protected head  3 (the system setting COMPACTION_PROTECT_FIRST_N=3)",
        "  token budget    none: the threshold percent of the window "
        "(COMPACTION_TOKEN_BUDGET unset)",
        "  auxiliary       channel 'aux' (id 1), the default channel",
    ]
    # the stored values are blank; the effective ones say where they come from
    assert (row["compactionThresholdPercent"], row["compactionProtectFirstN"]) == (None, None)
    assert row["effective"] == {
        "thresholdPercent": {
            "value": 55,
            "source": "system",
            "setting": "COMPACTION_THRESHOLD_PERCENT",
        },
        "protectFirstN": {"value": 3, "source": "system", "setting": "COMPACTION_PROTECT_FIRST_N"},
        "tokenBudget": {"value": None, "source": "system", "setting": "COMPACTION_TOKEN_BUDGET"},
        "auxiliaryChannel": {"id": 1, "name": "aux", "auxiliary": True, "source": "default"},
        # the gate (docs/architecture.md, "The gate"): the seed's default, on
        "autoCompact": {"value": "on", "source": "system", "setting": "COMPACTION_AUTO_COMPACT"},
        "warnPercent": {"value": None, "source": "system", "setting": "COMPACTION_WARN_PERCENT"},
    }


def test_clear_threshold_goes_back_to_the_system_setting(command: Command) -> None:
    ok(command, "channel", "add", "own", "--provider", "openai", "--model", "m", "--auxiliary")
    ok(command, "agent", "set", "a1", "--threshold", "80", "--protect-first-n", "5")
    ok(command, "agent", "set", "a1", "--auxiliary-channel", "own")
    before = shown(command, "a1")["effective"]
    assert (before["thresholdPercent"]["value"], before["thresholdPercent"]["source"]) == (
        80,
        "agent",
    )
    assert before["auxiliaryChannel"]["source"] == "agent"
    assert "  threshold       80% (the agent's own)" in ok(command, "agent", "show", "a1")

    ok(command, "agent", "set", "a1", "--clear-threshold")
    after = shown(command, "a1")

    assert after["compactionThresholdPercent"] is None
    assert after["effective"]["thresholdPercent"] == {
        "value": 70,
        "source": "system",
        "setting": "COMPACTION_THRESHOLD_PERCENT",
    }
    assert after["effective"]["protectFirstN"]["source"] == "agent"  # untouched
    text = ok(command, "agent", "set", "a1", "--clear-protect-first-n", "--clear-auxiliary-channel")
    assert "(the system setting COMPACTION_PROTECT_FIRST_N=3)" in text
    assert "none: no channel of its own and no default" in text


@pytest.mark.parametrize(
    "argv",
    [
        ("--threshold", "80", "--clear-threshold"),
        ("--protect-first-n", "2", "--clear-protect-first-n"),
        ("--auxiliary-channel", "1", "--clear-auxiliary-channel"),
    ],
)
def test_setting_and_clearing_at_once_is_a_usage_error(
    command: Command, argv: tuple[str, ...]
) -> None:
    with pytest.raises(SystemExit) as caught:
        command("agent", "set", "a1", *argv)
    assert caught.value.code == 2


def test_an_unknown_or_plain_channel_is_refused_for_an_agent(command: Command) -> None:
    ok(command, "channel", "add", "plain", "--provider", "openai", "--model", "m")
    for channel, message in (("nope", "no channel 'nope'"), ("plain", "not an auxiliary")):
        status, out, err = command("agent", "set", "a1", "--auxiliary-channel", channel)
        assert (status, out) == (1, "")
        assert err.startswith("compaction: error [invalid_request]: ") and message in err
    assert command("agent", "show", "a1")[0] == 1  # nothing was created


def test_an_imported_agent_starts_blank(command: Command, tmp_path: Path) -> None:
    transcript = tmp_path / "t.json"
    transcript.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    ok(command, "import", str(transcript), "--agent", "imported")

    row = shown(command, "imported")

    assert row["effective"]["thresholdPercent"]["source"] == "system"
    assert row["effective"]["protectFirstN"]["source"] == "system"
    assert row["effective"]["auxiliaryChannel"]["source"] == "none"
