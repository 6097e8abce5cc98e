"""The exact-identifier ledger (compaction/core/ledger.py): what ``extract`` finds, kind by kind
(paths, URLs, commands, errors, ids and values). Across kinds: test_ledger_extract.py; the cap,
rendering and parsing: test_ledger_build.py."""

from __future__ import annotations

import pytest

from compaction.core.ledger import extract
from tests.unit.builders import assistant, call, tool, user

# --------------------------------------------------------------------------- paths


def test_absolute_relative_and_dot_paths() -> None:
    found = extract([user("Look at /etc/hosts, then src/app/main.py and run ./run.sh please")])
    assert found["paths"] == ["/etc/hosts", "src/app/main.py", "./run.sh"]


def test_bare_file_names() -> None:
    found = extract([user("Edit setup.py and README.md, not the config")])
    assert found["paths"] == ["setup.py", "README.md"]


def test_paths_in_punctuation_and_quotes() -> None:
    found = extract([user('See /etc/hosts. Also `./run.sh`, "src/x.py" and (lib/util.ts).')])
    assert found["paths"] == ["/etc/hosts", "./run.sh", "src/x.py", "lib/util.ts"]


def test_home_and_parent_paths() -> None:
    found = extract([user("copy ~/notes/todo.txt to ../backup/todo.txt")])
    assert found["paths"] == ["~/notes/todo.txt", "../backup/todo.txt"]


@pytest.mark.parametrize(
    "text",
    [
        "and/or",
        "read and/or write",
        "1/2 of the tests",
        "about 3/4 done",
        "the date 12/31/2024",
        "input/output",
        "pass a word",
    ],
)
def test_not_paths(text: str) -> None:
    assert extract([user(text)])["paths"] == []


def test_file_inside_path_is_not_listed_again_as_bare_name() -> None:
    found = extract([user("open src/app/main.py now")])
    assert found["paths"] == ["src/app/main.py"]
    assert "main.py" not in found["paths"]


# --------------------------------------------------------------------------- URLs


def test_urls_with_trailing_punctuation_stripped() -> None:
    text = "See https://example.com/docs/page. and (https://foo.org/a/b), also http://x.io/y?z=1!"
    found = extract([user(text)])
    assert found["urls"] == [
        "https://example.com/docs/page",
        "https://foo.org/a/b",
        "http://x.io/y?z=1",
    ]


def test_url_is_not_listed_again_as_path() -> None:
    found = extract([user("read https://github.com/org/repo/blob/main/src/x.py and /etc/hosts")])
    assert found["urls"] == ["https://github.com/org/repo/blob/main/src/x.py"]
    assert found["paths"] == ["/etc/hosts"]
    for path in found["paths"]:
        assert not any(path in url for url in found["urls"])


def test_url_followed_by_fullwidth_punctuation() -> None:
    found = extract([user("请看 https://example.com/docs，然后运行测试。")])
    assert found["urls"] == ["https://example.com/docs"]


@pytest.mark.parametrize(
    ("text", "url"),
    [
        ("来源：https://example.com/a。下一步", "https://example.com/a"),
        ("见（https://example.com/b）", "https://example.com/b"),
        ("(see https://example.com/c).", "https://example.com/c"),
        ("[docs](https://example.com/d)", "https://example.com/d"),
        ("https://en.wikipedia.org/wiki/Go_(game)", "https://en.wikipedia.org/wiki/Go_(game)"),
        ("**https://example.com/e?q=1**", "https://example.com/e?q=1"),
    ],
)
def test_url_edges(text: str, url: str) -> None:
    assert extract([user(text)])["urls"] == [url]


def test_urls_in_json_arguments_end_before_the_escape() -> None:
    # write_file arguments hold HTML as JSON: href=\"...\" and \n are escapes, not the URL.
    content = '<link href="https://fonts.googleapis.com">\nhttps://cdn.example.com/x.js\n'
    arguments = {"path": "index.html", "content": content}
    found = extract([assistant("", call(arguments, name="write_file"))])
    assert found["urls"] == ["https://fonts.googleapis.com", "https://cdn.example.com/x.js"]


# --------------------------------------------------------------------------- commands


def test_command_from_command_key() -> None:
    found = extract([assistant("running", call({"command": "pytest -x tests/unit"}))])
    assert found["commands"] == ["pytest -x tests/unit"]


def test_command_from_cmd_key_list_joined() -> None:
    found = extract([assistant("", call({"cmd": ["git", "status", "--short"]}))])
    assert found["commands"] == ["git status --short"]


def test_multiline_script_remembered_by_first_line() -> None:
    script = "cat > /tmp/x.py << 'EOF'\nprint('hi')\nEOF"
    found = extract([assistant("", call({"command": script}))])
    assert found["commands"] == ["cat > /tmp/x.py << 'EOF'"]


def test_commands_from_several_calls_in_order() -> None:
    message = assistant(
        "",
        call({"command": "ls -la"}, id_="c1"),
        call({"cmd": "make build"}, id_="c2"),
        call({"path": "/etc/hosts"}, name="read_file", id_="c3"),
    )
    assert extract([message])["commands"] == ["ls -la", "make build"]


@pytest.mark.parametrize(
    "arguments",
    [
        "not json but has command in it",
        '["command", "ls"]',
        '{"command": ""}',
        '{"command": "   "}',
        '{"command": 42}',
        '{"query": "select command from t"}',
        "",
    ],
)
def test_no_command_from_bad_or_missing_arguments(arguments: str) -> None:
    assert extract([assistant("", call(arguments))])["commands"] == []


def test_commands_not_taken_from_plain_text() -> None:
    found = extract([user("please run `pytest -x` for me"), assistant("I will run pytest -x")])
    assert found["commands"] == []


# --------------------------------------------------------------------------- errors


def test_error_lines_from_tool_output() -> None:
    output = (
        "Traceback (most recent call last):\n"
        '  File "x.py", line 1, in <module>\n'
        "ValueError: bad value\n"
        "an ordinary line\n"
        "FAILED tests/test_a.py::test_x - assert 1 == 2\n"
        "fatal: not a git repository\n"
        "error: could not compile `demo`"
    )
    found = extract([tool(output)])
    assert found["errors"] == [
        "Traceback (most recent call last):",
        "ValueError: bad value",
        "FAILED tests/test_a.py::test_x - assert 1 == 2",
        "fatal: not a git repository",
        "error: could not compile `demo`",
    ]


def test_error_line_with_several_hints_is_listed_once_in_text_order() -> None:
    # Each hint is its own literal-led search; the lines still come out once, in text order.
    output = "fatal: FAILED with Error\nok\nTraceback then panic: here\nerror[E0308]: types"
    assert extract([tool(output)])["errors"] == [
        "fatal: FAILED with Error",
        "Traceback then panic: here",
        "error[E0308]: types",
    ]


def test_error_lines_from_user_messages() -> None:
    found = extract([user("I get this:\nTypeError: 'NoneType' object is not subscriptable")])
    assert found["errors"] == ["TypeError: 'NoneType' object is not subscriptable"]


def test_errors_an_assistant_names_are_quoted_not_its_lines() -> None:
    # Issue 24: an agent's own account of a failure keeps the error (tests/unit/
    # test_survival_ledger.py); its other lines with "error" in them are no error lines.
    found = extract([assistant("This raises ValueError: bad value, I think\nerror: handled")])
    assert found["errors"] == ["ValueError: bad value, I think"]


def test_error_quoted_mid_sentence_in_a_long_line() -> None:
    # A paragraph on one line is too long to list: the error quoted in it is listed instead,
    # up to the end of its sentence.
    prose = "I ran the import step " + "again and " * 30
    output = f"{prose}it failed with ValueError: bad input, so I retried. Then Done. " * 2
    found = extract(
        [tool(output), user("log: " + "x " * 200 + "requests.ConnectionError: refused")]
    )
    assert found["errors"] == [
        "ValueError: bad input, so I retried",
        "requests.ConnectionError: refused",
    ]


def test_error_line_is_stripped() -> None:
    found = extract([tool("    KeyError: 'missing'   \r\nok")])
    assert found["errors"] == ["KeyError: 'missing'"]


def test_no_errors_in_clean_output() -> None:
    assert extract([tool("3 passed in 0.12s\nall good")])["errors"] == []


def test_failed_test_path_also_listed_as_path() -> None:
    found = extract([tool("FAILED tests/unit/test_b.py::test_y")])
    assert "tests/unit/test_b.py" in found["paths"]


# --------------------------------------------------------------------------- ids and values


def test_ids() -> None:
    text = (
        "uuid 123e4567-e89b-12d3-a456-426614174000 commit 9dd68ea booking JG7FMM "
        "flight 4WQ150 user mia_li_3668"
    )
    ids = extract([user(text)])["ids"]
    for expected in (
        "123e4567-e89b-12d3-a456-426614174000",
        "9dd68ea",
        "JG7FMM",
        "4WQ150",
        "mia_li_3668",
    ):
        assert expected in ids


@pytest.mark.parametrize(
    "text",
    ["deadbeef", "1234567", "HELLO WORLD", "snake_case_name", "version_2", "a plain sentence"],
)
def test_not_ids(text: str) -> None:
    assert extract([user(text)])["ids"] == []


def test_uuid_segment_not_listed_again() -> None:
    ids = extract([user("session 550e8400-e29b-41d4-a716-446655440000 started")])["ids"]
    assert ids == ["550e8400-e29b-41d4-a716-446655440000"]


def test_values() -> None:
    found = extract([user("It costs $1,234.50 with numpy 2.9.1 and v1.0.3-rc1 installed")])
    assert found["values"] == ["$1,234.50", "2.9.1", "v1.0.3-rc1"]


def test_plain_numbers_are_not_values() -> None:
    assert extract([user("there are 42 files and 3.5 percent")])["values"] == []
