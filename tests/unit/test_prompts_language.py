"""Language detection and the summary prefix (compaction/core/prompts.py). The templates:
test_prompts_templates.py."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compaction.core.messages import SUMMARY_MARKER, Message, ToolCall
from compaction.core.prompts import (
    LANGUAGE_SAMPLE_LETTERS,
    detect_language,
    strip_prefix,
    summary_prefix,
)
from tests.unit.builders import assistant, system, tool, user


def summary(body: str, language: str = "en") -> Message:
    """A summary as the store loads it: flagged, opening with the prefix."""
    return user(summary_prefix(language) + "\n\n" + body, is_summary=True)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- detect_language


def test_detect_chinese_user() -> None:
    assert detect_language([user("请帮我修复这个错误，测试一直失败")]) == "zh"


def test_detect_chinese_with_code_words() -> None:
    messages = [user("请帮我修复 src/app.py 里的 bug，pytest 一直报错")]
    assert detect_language(messages) == "zh"


def test_detect_english_user() -> None:
    assert detect_language([user("Please fix the failing test in the parser")]) == "en"


def test_detect_ignores_assistant_and_tool_text() -> None:
    call = ToolCall(id="c1", name="bash", arguments='{"command": "ls"}')
    messages = [
        system("你是一个乐于助人的助手，请用中文回答所有问题"),
        user("Please list the files"),
        assistant("好的，我来列出所有文件，请稍等片刻", call),
        tool("文件列表：中文文件名一，中文文件名二，中文文件名三"),
    ]
    assert detect_language(messages) == "en"
    messages_zh = [
        user("请列出所有文件"),
        assistant("Sure, I will list every file in the repository for you right now", call),
        tool("README.md setup.py and a long English listing of many many files"),
    ]
    assert detect_language(messages_zh) == "zh"


def test_detect_ignores_summary_messages() -> None:
    messages = [
        summary("这是一段很长的中文摘要，记录了之前的全部进度和决定", "zh"),
        user("continue"),
    ]
    assert messages[0].is_summary
    assert detect_language(messages) == "en"
    messages = [summary("A long English summary of all the earlier work"), user("继续工作")]
    assert detect_language(messages) == "zh"


@pytest.mark.parametrize(
    "messages",
    [
        [],
        [system("系统提示：用中文回答")],
        [assistant("我会用中文回答")],
        [summary("中文摘要内容", "zh")],
        [user("")],
        [user("12345 !!! ???")],
    ],
)
def test_detect_without_user_letters_defaults_to_english(messages: list[Message]) -> None:
    assert detect_language(messages) == "en"


def test_detect_counts_all_user_messages() -> None:
    english = [user("Please fix the failing tests in the parser module now") for _ in range(10)]
    assert detect_language([*english, user("好")]) == "en"
    chinese = [user("请修复解析器模块中失败的测试用例") for _ in range(10)]
    assert detect_language([*chinese, user("ok")]) == "zh"


def test_detect_follows_the_latest_user_messages() -> None:
    # Only the latest letters count: a user who switched language is answered in the new one
    # (over every message, the English would outweigh the Chinese here).
    english = user("Please fix the failing tests in the parser module now")
    chinese = user("请帮我修复解析器模块里失败的测试" * 10)
    old = [english] * (LANGUAGE_SAMPLE_LETTERS // 10)
    recent = [chinese] * (LANGUAGE_SAMPLE_LETTERS // 150 + 1)
    assert detect_language([*old, *recent]) == "zh"
    assert detect_language([*recent, *old]) == "en"


# --------------------------------------------------------------------------- prefix


@pytest.mark.parametrize("language", ["zh", "en"])
def test_summary_prefix_starts_with_marker(language: str) -> None:
    prefix = summary_prefix(language)  # type: ignore[arg-type]
    assert prefix.startswith("[CONTEXT COMPACTION]")
    assert prefix.startswith(SUMMARY_MARKER)
    # The look alone makes no summary: anyone can type it (docs/architecture.md, "The algorithm").
    assert not Message(role="user", content=prefix + "\n\nbody").is_summary


def test_prefixes_differ_by_language() -> None:
    assert summary_prefix("zh") != summary_prefix("en")
    assert any("\u4e00" <= ch <= "\u9fff" for ch in summary_prefix("zh"))


@pytest.mark.parametrize("language", ["zh", "en"])
def test_strip_prefix_inverts_summary_prefix(language: str) -> None:
    body = "## Goal\n- fix the parser\n\n## Next steps\n- run the tests"
    content = summary_prefix(language) + "\n\n" + body  # type: ignore[arg-type]
    assert strip_prefix(content) == body


@given(
    language=st.sampled_from(["zh", "en"]),
    body=st.text(min_size=1).filter(lambda s: not s[0].isspace() and SUMMARY_MARKER not in s),
)
def test_strip_prefix_round_trip_property(language: str, body: str) -> None:
    assert strip_prefix(summary_prefix(language) + "\n\n" + body) == body  # type: ignore[arg-type]


def test_strip_prefix_of_bare_marker_and_plain_text() -> None:
    assert strip_prefix(f"{SUMMARY_MARKER} hand-written body") == "hand-written body"
    assert (
        strip_prefix(f"{SUMMARY_MARKER} body with {SUMMARY_MARKER}")
        == f"body with {SUMMARY_MARKER}"
    )
    assert strip_prefix("no marker here") == "no marker here"
    assert strip_prefix("") == ""
