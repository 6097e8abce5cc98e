"""What each section of an offline summary holds (compaction/core/offline.py): the goal, the
constraints, what was done, what blocked, the files, decisions and tools, in both languages."""

from __future__ import annotations

import pytest

from tests.unit.builders import assistant, summary, system, tool, user
from tests.unit.offline_helpers import EN, NONE, ZH, bash, conversation, section, summarize


def test_goal_is_first_real_user_message() -> None:
    out = summarize(conversation())
    assert section(out, EN["goal"]) == [
        "Fix the failing parser tests in src/parser.py. You must not change the public API. "
        "The weather is nice today."
    ]


def test_goal_from_head_when_middle_has_none() -> None:
    head = [system("You are a coding agent."), user("Build a CLI that converts CSV to JSON")]
    out = summarize([assistant("Working on it", bash("ls")), tool("main.py")], head=head)
    assert section(out, EN["goal"]) == ["Build a CLI that converts CSV to JSON"]


def test_goal_prefers_head_over_middle() -> None:
    head = [user("The original goal")]
    out = summarize([user("a later ask"), assistant("ok")], head=head)
    assert section(out, EN["goal"]) == ["The original goal"]


def test_goal_skips_summary_messages() -> None:
    head = [system("sys"), summary("earlier summary text")]
    out = summarize([user("The real goal"), assistant("ok")], head=head)
    assert section(out, EN["goal"]) == ["The real goal"]


def test_long_goal_is_clipped_to_one_line() -> None:
    out = summarize([user("word " * 200 + "\nsecond line")])
    (goal,) = section(out, EN["goal"])
    assert len(goal) <= 240
    assert goal.endswith("…")
    assert "\n" not in goal


def test_commands_run_appear_under_done() -> None:
    done = section(summarize(conversation()), EN["done"])
    assert done == ["ran `pytest tests/test_parser.py -x`", "ran `git diff --stat`"]


def test_files_touched() -> None:
    files = section(summarize(conversation()), EN["files"])
    for path in ("src/parser.py", "tests/test_parser.py", "docs/index.md"):
        assert path in files


def test_error_lines_under_blocked() -> None:
    blocked = section(summarize(conversation()), EN["blocked"])
    assert blocked == ["FAILED tests/test_parser.py::test_empty - ValueError: empty input"]


def test_errors_read_from_pruned_tool_original() -> None:
    pruned = tool(
        "[Old tool output cleared]",
        original_content="Traceback (most recent call last):\nKeyError: 'id'",
    )
    out = summarize([assistant("", bash("python run.py")), pruned])
    blocked = section(out, EN["blocked"])
    assert "KeyError: 'id'" in blocked


def test_last_open_ask_under_next_steps() -> None:
    # The ask, then only work on it: tool calls and their results, no reply yet.
    messages = [
        *conversation()[:-1],
        assistant("", bash("cat docs/index.md", "c3")),
        tool("# Docs", "c3"),
    ]
    assert section(summarize(messages), EN["next"]) == [
        "Now also update the docs in docs/index.md please."
    ]


@pytest.mark.parametrize(
    "reply",
    ["Updating docs/index.md next.", "Done: docs/index.md now documents the guard clause."],
)
def test_an_answered_ask_is_no_next_step(reply: str) -> None:
    # A reply in text ends the agent's turn: what was asked has had its answer.
    messages = [
        *conversation()[:-1],
        assistant("", bash("vim docs/index.md", "c3")),
        tool("", "c3"),
    ]
    out = summarize([*messages, assistant(reply)])
    assert section(out, EN["next"]) == [NONE["en"]]
    assert "Now also update the docs" not in out.split(EN["next"])[1]


def test_an_update_drops_next_steps_a_later_reply_answered() -> None:
    previous = summarize([user("Then open a PR"), assistant("", bash("gh pr create", "c1"))])
    assert section(previous, EN["next"]) == ["Then open a PR"]
    out = summarize([user("Add the changelog too"), assistant("Added it.")], previous=previous)
    assert section(out, EN["next"]) == [NONE["en"]]


def test_in_progress_is_last_assistant_words() -> None:
    assert section(summarize(conversation()), EN["doing"]) == ["Updating docs/index.md next."]


def test_decisions_from_assistant_sentences() -> None:
    decisions = section(summarize(conversation()), EN["decisions"])
    assert decisions == ["I decided to add a guard clause because the empty case is common."]


def test_tools_counted() -> None:
    tools = section(summarize(conversation()), EN["tools"])
    assert tools == ["bash ×2"]


def test_constraints_from_user_sentences() -> None:
    messages = [
        user(
            "Refactor the loader. You must keep the old CLI working! "
            "Tests should stay fast. Never push to main. The sky is blue."
        ),
        assistant("You must trust me on this."),  # assistant text is not a constraint
        user("不要修改公共接口。今天天气很好。"),
    ]
    constraints = section(summarize(messages), EN["constraints"])
    assert "You must keep the old CLI working!" in constraints
    assert "Tests should stay fast." in constraints
    assert "Never push to main." in constraints
    assert "不要修改公共接口。" in constraints
    assert "The sky is blue." not in constraints
    assert "今天天气很好。" not in constraints
    assert "You must trust me on this." not in constraints


@pytest.mark.parametrize(
    "sentence", ["You must not edit setup.py at all.", "You must keep Python 3.11 support!"]
)
def test_constraint_keeps_dotted_words_whole(sentence: str) -> None:
    constraints = section(summarize([user(sentence)]), EN["constraints"])
    assert constraints == [sentence]


def test_chinese_sections() -> None:
    messages = [
        user("请修复登录页面的错误。不要修改数据库结构。"),
        assistant("好的，先运行测试。", bash("npm test", "c1")),
        tool("Error: Cannot find module 'express'", "c1"),
        user("然后部署到测试环境"),
    ]
    out = summarize(messages, language="zh")
    assert section(out, ZH["goal"]) == ["请修复登录页面的错误。不要修改数据库结构。"]
    assert "不要修改数据库结构。" in section(out, ZH["constraints"])
    assert section(out, ZH["done"]) == ["ran `npm test`"]
    assert section(out, ZH["blocked"]) == ["Error: Cannot find module 'express'"]
    assert section(out, ZH["next"]) == ["然后部署到测试环境"]
