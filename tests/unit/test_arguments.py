"""Tool-call arguments read through their JSON (compaction/core/arguments.py)."""

from __future__ import annotations

import json

from compaction.core.arguments import readable, redacted, strings_of
from compaction.core.redact import rules_for
from tests.unit.builders import assistant, call, user

KEY = "sk-" + "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY"


def test_escaped_arguments_read_as_their_strings() -> None:
    escaped = json.dumps({"path": "a.py", "edits": [{"old": "x\ny", "new": 'say "hi"'}], "n": 3})
    strings = strings_of(escaped)
    assert strings == ["a.py", "x\ny", 'say "hi"']  # in order, numbers left out
    assert readable(escaped, strings) == 'a.py\nx\ny\nsay "hi"'


def test_arguments_without_an_escape_or_that_do_not_decode_read_as_written() -> None:
    for arguments in (
        '{"command": "make"}',
        '{"broken": "a\\nb"',
        "[" * 5000 + '"\\n"' + "]" * 5000,
    ):
        assert strings_of(arguments) is None
        assert readable(arguments, None) == arguments


def test_secrets_in_escaped_strings_are_redacted_and_encoded_again() -> None:
    # A file the agent writes holds a JSON config; a command spells a key with a \u escape.
    config = json.dumps({"user": "app", "password": "hunter2222"})
    written = json.dumps({"path": "conf.json", "content": config})
    spelled = '{"command": "echo \\u0073k-' + KEY[3:] + '"}'
    messages = [
        user("go"),
        assistant("", call(written, "write", "c1"), call(spelled, "bash", "c2")),
    ]
    strings = {a: found for a in (written, spelled) if (found := strings_of(a)) is not None}
    rules = rules_for("\n".join(line for found in strings.values() for line in found))

    shown = redacted(messages, rules, strings)

    assert shown[0] is messages[0]  # no call changed: the same message
    write, echo = shown[1].tool_calls
    assert "hunter2222" not in write.arguments and KEY[3:] not in echo.arguments
    assert json.loads(json.loads(write.arguments)["content"]) == {
        "user": "app",
        "password": "[REDACTED]",
    }
    assert json.loads(echo.arguments) == {"command": "echo [REDACTED]"}
    assert [c.id for c in shown[1].tool_calls] == ["c1", "c2"]


def test_arguments_with_nothing_to_redact_keep_their_text() -> None:
    escaped = json.dumps({"content": "line one\nline two"}, indent=1)
    messages = [assistant("", call(escaped, "write", "c1"))]
    found = strings_of(escaped)
    assert found is not None
    assert redacted(messages, rules_for(KEY), {escaped: found}) is messages
