"""``compaction channel add|list|edit|default|remove`` through ``cli.main`` (docs/architecture.md,
"Settings", "Logs and metrics"): a channel's key is shown masked, and so are the credentials a
base URL carries (a password, a lone user name, query and fragment values), as text and as JSON;
the list marks the default and the auxiliary channels; a channel agents use, or the default, is
removed or unmarked only with --force, which says where its agents go."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

PASSWORD = "s3cret-" + "pw-42"
QUERY_KEY = "qk-" + "0123456789"
KEY = "sk-cli-" + "0123456789abcdef"
BASE_URL = f"https://proxy-user:{PASSWORD}@proxy.example/v1?api_key={QUERY_KEY}&region=eu"
SHOWN = "https://proxy-user:…@proxy.example/v1?api_key=…&region=…"


def test_channel_credentials_are_masked(command: Callable[..., tuple[int, str, str]]) -> None:
    options = ["--provider", "openai-compatible", "--model", "m", "--base-url", BASE_URL]
    options += ["--api-key", KEY, "--auxiliary", "--default"]
    outputs = [
        command("channel", "add", "proxied", *options),
        command("channel", "add", "again", *options, "--json"),
        command("channel", "list"),
        command("channel", "list", "--json"),
    ]

    assert [status for status, _, _ in outputs] == [0, 0, 0, 0]
    for _, out, err in outputs:
        for secret in (PASSWORD, QUERY_KEY, KEY):
            assert secret not in out + err, secret
    listed = json.loads(outputs[-1][1])
    assert [row["baseUrl"] for row in listed] == [SHOWN, SHOWN]
    assert [row["apiKey"] for row in listed] == ["sk-…cdef"] * 2
    assert json.loads(outputs[1][1])["baseUrl"] == SHOWN


# --- managing channels: edit, default, remove (docs/architecture.md, "Settings") --------------

Command = Callable[..., tuple[int, str, str]]


def ok(command: Command, *argv: str) -> str:
    status, out, err = command(*argv)
    assert (status, err) == (0, ""), err
    return out


def refused(command: Command, *argv: str) -> str:
    """The one error line of a refused command (nothing on stdout)."""
    status, out, err = command(*argv)
    assert (status, out) == (1, "")
    assert err.startswith("compaction: error [invalid_request]: ") and err.count("\n") == 1
    return err


def channels(command: Command) -> dict[str, dict[str, object]]:
    return {row["name"]: row for row in json.loads(ok(command, "channel", "list", "--json"))}


def setup_in_use(command: Command) -> None:
    """Channels 'main' (plain, keyed), 'fallback' (the default) and 'own', which agents a1 and
    a2 use."""
    ok(command, "channel", "add", "main", "--provider", "openai", "--model", "m", "--api-key", KEY)
    options = ["--provider", "anthropic", "--model", "claude-haiku", "--auxiliary"]
    ok(command, "channel", "add", "fallback", *options, "--default", "--api-key-env", "AUX_API_KEY")
    ok(command, "channel", "add", "own", *options)
    ok(command, "agent", "set", "a1", "--auxiliary-channel", "own")
    ok(command, "agent", "set", "a2", "--auxiliary-channel", "3")


def test_channel_list_shows_the_default_and_the_auxiliary_ones(command: Command) -> None:
    setup_in_use(command)
    out = ok(command, "channel", "list")

    header, main, fallback, own, footer = out.splitlines()
    assert header.split() == ["ID", "NAME", "PROVIDER", "MODEL", "KEY", "ROLE"]
    assert main.split()[-2:] == ["sk-…cdef", "-"]
    assert fallback.endswith("$AUX_API_KEY   auxiliary, default")
    assert own.endswith("auxiliary") and "default" not in own
    assert footer == "default auxiliary channel: 'fallback' (id 2)"
    assert KEY not in out
    rows = channels(command)
    assert [(r["auxiliary"], r["default"]) for r in rows.values()] == [
        (False, False),
        (True, True),
        (True, False),
    ]


def test_channel_edit_changes_a_channel_and_never_shows_its_key(command: Command) -> None:
    setup_in_use(command)
    new_key = "sk-new-" + "fedcba9876543210"

    out = ok(command, "channel", "edit", "main", "--name", "primary", "--api-key", new_key)
    as_json = json.loads(ok(command, "channel", "edit", "1", "--model", "m2", "--json"))

    assert out.startswith("edited channel 1 'primary': openai m\n")
    assert as_json["channel"]["apiKey"] == "sk-…3210" and as_json["channel"]["model"] == "m2"
    assert as_json["agentsNowOnDefault"] == [] and not as_json["defaultCleared"]
    for secret in (KEY, new_key):
        assert secret not in out + json.dumps(as_json)
    ok(command, "channel", "edit", "primary", "--clear-api-key", "--auxiliary")
    assert channels(command)["primary"]["apiKey"] is None
    assert channels(command)["primary"]["auxiliary"] is True
    assert "nothing to change" in refused(command, "channel", "edit", "primary")
    assert "no channel 'nope'" in refused(command, "channel", "edit", "nope", "--model", "x")


def test_channel_default_moves_the_default_and_refuses_a_plain_channel(command: Command) -> None:
    setup_in_use(command)

    out = ok(command, "channel", "default", "own")

    assert out == (
        "channel 3 'own': anthropic claude-haiku (auxiliary, default): the default "
        "auxiliary channel now\n"
    )
    assert channels(command)["own"]["default"] is True
    err = refused(command, "channel", "default", "main")
    assert "'main' is not an auxiliary channel" in err and KEY not in err
    assert channels(command)["own"]["default"] is True


@pytest.mark.parametrize(
    "argv", [("channel", "remove", "own"), ("channel", "edit", "own", "--no-auxiliary")]
)
def test_a_channel_agents_use_is_refused_naming_them(command: Command, argv: tuple[str]) -> None:
    setup_in_use(command)
    before = channels(command)

    err = refused(command, *argv)

    assert "channel 'own'" in err and "agents a1, a2 use it" in err and "--force" in err
    assert channels(command) == before


def test_forced_removal_says_the_agents_now_use_the_default(command: Command) -> None:
    setup_in_use(command)

    out = ok(command, "channel", "remove", "own", "--force")

    assert out.splitlines() == [
        "removed channel 3 'own': anthropic claude-haiku (auxiliary)",
        "agents a1, a2 now use the default channel 'fallback' (id 2)",
    ]
    assert list(channels(command)) == ["main", "fallback"]
    shown = json.loads(ok(command, "agent", "show", "a1", "--json"))
    assert shown["effective"]["auxiliaryChannel"] == {
        "id": 2,
        "name": "fallback",
        "auxiliary": True,
        "source": "default",
    }


def test_forced_unmarking_of_the_default_says_there_is_none_now(command: Command) -> None:
    setup_in_use(command)
    ok(command, "agent", "set", "a3", "--auxiliary-channel", "fallback")
    assert "default auxiliary channel" in refused(command, "channel", "remove", "fallback")

    done = json.loads(
        ok(command, "channel", "edit", "fallback", "--no-auxiliary", "--force", "--json")
    )
    out = ok(command, "channel", "remove", "own", "--force")

    assert (done["agentsNowOnDefault"], done["defaultCleared"], done["defaultChannel"]) == (
        ["a3"],
        True,
        None,
    )
    assert out.splitlines()[1] == (
        "agents a1, a2 now have no auxiliary channel: there is no default one"
    )
    assert ok(command, "channel", "list").splitlines()[-1].startswith("no default auxiliary")
    assert "none: no channel of its own" in ok(command, "agent", "show", "a1")
