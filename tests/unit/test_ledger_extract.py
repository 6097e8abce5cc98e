"""The exact-identifier ledger (compaction/core/ledger.py): ``extract`` across kinds: every kind
present, first-appearance order, duplicates, summaries skipped, pruned and call text read,
secrets redacted, overlong items left out. Kind by kind: test_ledger_kinds.py."""

from __future__ import annotations

import json

from compaction.core.ledger import KINDS, extract
from compaction.core.messages import SUMMARY_MARKER
from compaction.core.redact import Secrets, rules_for
from compaction.core.turns import Turns
from tests.unit.builders import assistant, call, tool, user

KIND_NAMES = list(KINDS)


def test_every_kind_present() -> None:
    found = extract([user("hello")])
    assert set(found) == set(KIND_NAMES)
    assert all(values == [] for values in found.values())
    assert extract([]) == {kind: [] for kind in KIND_NAMES}


def test_extract_reads_distinct_words_given_by_the_caller() -> None:
    messages = [user("see src/app.py and 1a2b3c4d5e"), tool("src/app.py v1.2.3 src/lib.py")]
    turns = Turns.of(messages)
    assert extract(turns, turns.distinct_words()) == extract(messages)
    assert extract(messages)["paths"] == ["src/app.py", "src/lib.py"]


def test_dedup_keeps_first_appearance_order() -> None:
    messages = [
        user("src/b.py then src/a.py then src/b.py"),
        tool("see /etc/b.conf and src/a.py and /etc/a.conf"),
        user("/etc/b.conf again, then ./c.sh"),
    ]
    expected = ["src/b.py", "src/a.py", "/etc/b.conf", "/etc/a.conf", "./c.sh"]
    assert extract(messages)["paths"] == expected
    bare = extract([user("b.py then a.py"), tool("b.py and c.py"), user("a.py")])
    assert bare["paths"] == ["b.py", "a.py", "c.py"]


def test_first_appearance_order_across_shapes() -> None:
    assert extract([user("setup.py then /etc/hosts")])["paths"] == ["setup.py", "/etc/hosts"]
    # Paths are searched among the words with a slash, bare names among all: one order still.
    text = "a.md x/y/z.py b.txt (see ./docs/c.rst) d.json e/f/g and h.toml"
    assert extract([user(text)])["paths"] == [
        "a.md",
        "x/y/z.py",
        "b.txt",
        "./docs/c.rst",
        "d.json",
        "e/f/g",
        "h.toml",
    ]
    assert extract([user("user JG7FMM then commit 9dd68ea")])["ids"] == ["JG7FMM", "9dd68ea"]


def test_dedup_of_commands_and_errors() -> None:
    messages = [
        assistant("", call({"command": "pytest"}, id_="c1")),
        tool("ValueError: x", call_id="c1"),
        assistant("", call({"command": "ls"}, id_="c2")),
        tool("ok", call_id="c2"),
        assistant("", call({"command": "pytest"}, id_="c3")),
        tool("ValueError: x", call_id="c3"),
    ]
    found = extract(messages)
    assert found["commands"] == ["pytest", "ls"]
    assert found["errors"] == ["ValueError: x"]


def test_summary_messages_are_skipped() -> None:
    prior = user(
        f"{SUMMARY_MARKER} earlier\n/etc/secret.conf https://old.example.com/x\n"
        "ValueError: old error 9dd68ea",
        is_summary=True,
    )
    assert prior.is_summary
    found = extract([prior, user("now look at /etc/hosts")])
    assert found["paths"] == ["/etc/hosts"]
    assert found["urls"] == []
    assert found["errors"] == []
    assert found["ids"] == []


def test_pruned_message_is_read_from_original_content() -> None:
    original = "ValueError: lost detail\nwritten to /var/log/app.log"
    message = tool("[Old tool output cleared to save context space]", original_content=original)
    found = extract([message])
    assert found["errors"] == ["ValueError: lost detail"]
    assert found["paths"] == ["/var/log/app.log"]


def test_identifiers_in_tool_call_arguments_are_found() -> None:
    found = extract([assistant("", call({"path": "/srv/app/config.yaml"}, name="read_file"))])
    assert found["paths"] == ["/srv/app/config.yaml"]


def test_secrets_inside_items_are_redacted() -> None:
    messages = [
        assistant(
            "",
            call(
                {
                    "command": 'curl -H "Authorization: Bearer abcdefghijklmnopqrstuvwxyz123456" '
                    "https://api.example.com/v1"
                }
            ),
        ),
        user("clone https://alice:hunter2secret@git.example.com/repo.git"),
        tool("ValueError: bad password=hunter2hunter2 for db"),
        user("fetch https://api.example.com/v1?api_key=abcdef123456XYZ"),
    ]
    found = extract(messages)
    flat = [item for values in found.values() for item in values]
    assert flat
    for item in flat:
        assert "abcdefghijklmnopqrstuvwxyz123456" not in item
        assert "hunter2" not in item
        assert "abcdef123456XYZ" not in item
    assert found["commands"] == [
        'curl -H "Authorization: Bearer [REDACTED]" https://api.example.com/v1'
    ]
    assert "https://alice:[REDACTED]@git.example.com/repo.git" in found["urls"]
    assert found["errors"] == ["ValueError: bad password=[REDACTED] for db"]
    # The engine passes the rules it chose on the distinct words: the same items come out.
    turns = Turns.of(messages)
    words = turns.distinct_words()
    assert extract(turns, words, rules_for(" ".join(words))) == found


def test_rules_given_for_the_words_cover_a_command_escaped_in_json() -> None:
    # "\u0073k-" is "sk-" once decoded: arguments with an escape are read decoded, so the words
    # hold the key's literal and the rules chosen on them redact the command.
    key = "sk-" + "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY"
    arguments = '{"command": "echo \\u0073k-' + key[3:] + '"}'
    messages = [assistant("", call(arguments))]
    turns = Turns.of(messages)
    words = turns.distinct_words()
    assert key in words
    found = extract(turns, words, rules_for(" ".join(words)))
    assert found["commands"] == ["echo [REDACTED]"]


def test_identifiers_after_a_json_escape_are_exact() -> None:
    # A written file's lines start after "\n" in the raw arguments: read decoded, a path there is
    # not "nsrc/...", and an id at a line's start is a word of its own.
    content = "see\nsrc/pkg/foo.py\ndeadbeef12 ok\nsetup.py\tv1.2.3"
    arguments = json.dumps({"path": "/tmp/x.txt", "content": content})
    messages = [assistant("", call(arguments, "write", "c1")), tool("ok", "c1")]
    found = extract(messages)
    assert found["paths"] == ["/tmp/x.txt", "src/pkg/foo.py", "setup.py"]
    assert found["ids"] == ["deadbeef12"]
    assert found["values"] == ["v1.2.3"]


def test_overlong_items_are_left_out() -> None:
    long_command = "echo " + "x" * 400
    found = extract([assistant("", call({"command": long_command}))])
    assert found["commands"] == []


def test_lines_that_clip_alike_are_listed_once() -> None:
    found = extract([tool("KeyError: 'k'\n  KeyError: 'k'  \nprogress 10%\rKeyError: 'k'")])
    assert found["errors"] == ["KeyError: 'k'"]


def test_values_redaction_took_out_in_context_stay_out() -> None:
    # Alone, the AWS key is a path and the hex secret an id; in the turns they follow their keys.
    aws = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
    signing = "9f86d081884c7d659a2f" + "eaa0c55ad015a3bf4f1b"
    messages = [
        tool(f"aws_secret_access_key = {aws}\nsee src/app.py"),
        user(f"The signing secret: {signing}, commit 6ab5665e0967"),
    ]
    turns = Turns.of(messages)
    words = turns.distinct_words()
    rules = rules_for(" ".join(words))
    assert aws in extract(turns, words, rules)["paths"]  # judged alone

    found = extract(turns, words, rules, Secrets.of(turns.texts, rules))

    assert found["paths"] == ["src/app.py"]
    assert found["ids"] == ["6ab5665e0967"]
