"""The deterministic extractive summarizer (compaction/offline.py)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from compaction import CompactionConfig, compact, estimate_messages_tokens
from compaction.messages import SUMMARY_MARKER, Message, ToolCall, messages_from_dicts
from compaction.offline import OfflineSummarizer
from compaction.prompts import HEADINGS, Language, build_prompt
from compaction.summary import SummaryRequest
from tests.fakes import TRANSCRIPTS
from tests.unit.builders import assistant, system, tool, user

PYDICOM = TRANSCRIPTS / "msa_deepseek-chat_pydicom-1139.json"

# --------------------------------------------------------------------------- builders


def bash(command: str, id_: str = "c1") -> ToolCall:
    return ToolCall(id=id_, name="bash", arguments=json.dumps({"command": command}))


def request(
    messages: Sequence[Message],
    *,
    head: Sequence[Message] = (),
    previous: str | None = None,
    budget: int = 4000,
    language: str = "en",
    focus: str | None = None,
) -> SummaryRequest:
    return SummaryRequest(
        prompt="(prompt unused by the offline summarizer)",
        serialized="(serialized unused)",
        previous_summary=previous,
        budget_tokens=budget,
        language=language,  # type: ignore[arg-type]
        focus=focus,
        chunk_index=0,
        chunk_count=1,
        messages=tuple(messages),
        head=tuple(head),
    )


def summarize(messages: Sequence[Message], **kwargs: Any) -> str:
    return OfflineSummarizer().summarize(request(messages, **kwargs))


EN, ZH = HEADINGS["en"], HEADINGS["zh"]
NONE = {"en": "(none recorded)", "zh": "（无记录）"}


def section(text: str, heading: str) -> list[str]:
    """The ``- item`` lines under ``heading`` (until the next heading), without the dash."""
    lines = text.splitlines()
    start = lines.index(heading) + 1
    items: list[str] = []
    for line in lines[start:]:
        if line.startswith("#"):
            break
        if line.startswith("- "):
            items.append(line[2:])
    return items


def conversation() -> list[Message]:
    return [
        user(
            "Fix the failing parser tests in src/parser.py. "
            "You must not change the public API. The weather is nice today."
        ),
        assistant("I will run the tests first.", bash("pytest tests/test_parser.py -x", "c1")),
        tool("FAILED tests/test_parser.py::test_empty - ValueError: empty input\n1 failed", "c1"),
        assistant("I decided to add a guard clause because the empty case is common."),
        assistant("", bash("git diff --stat", "c2")),
        tool(" src/parser.py | 3 ++-\n 1 file changed", "c2"),
        user("Now also update the docs in docs/index.md please."),
        assistant("Updating docs/index.md next."),
    ]


# --------------------------------------------------------------------------- shape


def test_deterministic() -> None:
    first = summarize(conversation())
    assert summarize(conversation()) == first
    assert OfflineSummarizer().summarize(request(conversation())) == first
    zh = summarize(conversation(), language="zh")
    assert summarize(conversation(), language="zh") == zh


@pytest.mark.parametrize("language", ["en", "zh"])
def test_at_least_200_characters_for_a_tiny_middle(language: str) -> None:
    out = summarize([assistant("ok")], language=language)
    assert len(out.strip()) >= 200


def test_zh_at_least_200_characters_with_a_user_line() -> None:
    out = summarize([user("继续"), assistant("好")], language="zh")
    assert len(out.strip()) >= 200


def test_says_it_is_extractive() -> None:
    en = summarize(conversation())
    zh = summarize(conversation(), language="zh")
    assert "Extractive" in en.splitlines()[0]
    assert "抽取式" in zh.splitlines()[0]
    assert "抽取式" not in en
    assert "Extractive" not in zh


@pytest.mark.parametrize("language", ["en", "zh"])
def test_every_heading_in_order(language: Language) -> None:
    out = summarize(conversation(), language=language)
    found = [line for line in out.splitlines() if line.startswith("#")]
    assert found == list(HEADINGS[language].values())
    other = HEADINGS["zh" if language == "en" else "en"]
    for heading in other.values():
        assert heading not in out.splitlines()


def test_headings_match_the_prompt_structure() -> None:
    for language in HEADINGS:
        prompt = build_prompt(language, "turns", 2000)
        prompt_headings = [line for line in prompt.splitlines() if line.startswith("#")]
        assert prompt_headings == list(HEADINGS[language].values())


@pytest.mark.parametrize("language", ["en", "zh"])
def test_empty_sections_say_none_recorded(language: Language) -> None:
    out = summarize([assistant("ok")], language=language)
    assert section(out, HEADINGS[language]["blocked"]) == [NONE[language]]
    assert section(out, HEADINGS[language]["files"]) == [NONE[language]]
    assert not out.startswith(SUMMARY_MARKER)  # the engine adds the prefix, not the summarizer


# --------------------------------------------------------------------------- content


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
    head = [system("sys"), user(f"{SUMMARY_MARKER} earlier summary text")]
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


def test_last_user_ask_under_next_steps() -> None:
    assert section(summarize(conversation()), EN["next"]) == [
        "Now also update the docs in docs/index.md please."
    ]


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


# --------------------------------------------------------------------------- update


def test_update_keeps_previous_lines_and_first_goal() -> None:
    previous = summarize(conversation(), budget=12_000)
    later = [
        user("Next, add a changelog entry. Do not bump the version."),
        assistant("", bash("git log --oneline -3", "c9")),
        tool("fatal: your current branch has no commits yet", "c9"),
        user("Then open a PR"),
    ]
    out = summarize(later, previous=previous, budget=12_000)
    assert section(out, EN["goal"]) == section(previous, EN["goal"])
    assert "Extractive" in out
    # "Next steps" describes the latest state: an update replaces it (checked below).
    for key in ("constraints", "done", "blocked", "decisions", "files", "tools"):
        old = section(previous, EN[key])
        new = section(out, EN[key])
        for line in old:
            if line != NONE["en"]:
                assert line in new, (key, line)
    assert "ran `git log --oneline -3`" in section(out, EN["done"])
    assert "fatal: your current branch has no commits yet" in section(out, EN["blocked"])
    assert "Do not bump the version." in section(out, EN["constraints"])
    assert section(out, EN["next"])[-1] == "Then open a PR"
    # Old lines first, then new ones.
    done = section(out, EN["done"])
    assert done.index("ran `pytest tests/test_parser.py -x`") < done.index(
        "ran `git log --oneline -3`"
    )


def test_update_does_not_duplicate_lines() -> None:
    previous = summarize(conversation(), budget=12_000)
    out = summarize(conversation(), previous=previous, budget=12_000)
    for key in EN:
        if key == "progress":
            continue
        items = section(out, EN[key])
        assert len(items) == len(set(items)), key
    assert out == previous


def test_update_drops_none_recorded_placeholder() -> None:
    previous = summarize([assistant("ok")], budget=12_000)
    out = summarize([assistant("", bash("make")), tool("ok")], previous=previous, budget=12_000)
    assert section(out, EN["done"]) == ["ran `make`"]


def test_update_in_chinese() -> None:
    previous = summarize(
        [user("目标：迁移到新框架"), assistant("好")], language="zh", budget=12_000
    )
    out = summarize(
        [user("必须保留旧接口"), assistant("", bash("pytest")), tool("ok")],
        previous=previous,
        language="zh",
        budget=12_000,
    )
    assert section(out, ZH["goal"]) == ["目标：迁移到新框架"]
    assert "必须保留旧接口" in section(out, ZH["constraints"])
    assert section(out, ZH["done"]) == ["ran `pytest`"]


# --------------------------------------------------------------------------- budget


def test_small_budget_keeps_at_least_two_newest_items() -> None:
    messages: list[Message] = [user("Run everything")]
    for i in range(8):
        messages += [
            assistant("", bash(f"step_{i}.sh", f"c{i}")),
            tool(f"ValueError: e{i}", f"c{i}"),
        ]
    out = summarize(messages, budget=1)
    assert section(out, EN["done"]) == ["ran `step_6.sh`", "ran `step_7.sh`"]
    assert section(out, EN["blocked"]) == ["ValueError: e6", "ValueError: e7"]
    assert section(out, EN["files"]) == ["step_6.sh", "step_7.sh"]


def test_large_budget_keeps_more() -> None:
    messages: list[Message] = [user("Run everything")]
    for i in range(8):
        messages += [assistant("", bash(f"step_{i}.sh", f"c{i}")), tool("ok", f"c{i}")]
    small = summarize(messages, budget=1)
    large = summarize(messages, budget=12_000)
    assert len(section(large, EN["done"])) == 8
    assert len(large) > len(small)


def test_small_budget_with_one_item_keeps_it() -> None:
    out = summarize([user("go"), assistant("", bash("make")), tool("ok")], budget=1)
    assert section(out, EN["done"]) == ["ran `make`"]


# --------------------------------------------------------------------------- through compact()


def load_pydicom() -> list[Message]:
    return messages_from_dicts(json.loads(PYDICOM.read_text(encoding="utf-8")))


def test_compact_real_transcript_with_offline_summarizer() -> None:
    messages = load_pydicom()
    window = estimate_messages_tokens(messages)
    config = CompactionConfig(context_window=window)
    assert window >= config.threshold_tokens
    result = compact(messages, config, OfflineSummarizer(), reason="manual")
    assert result.summarized
    assert result.language == "en"
    assert result.summary_message is not None
    content = result.summary_message.content
    assert content.startswith("[CONTEXT COMPACTION]")
    assert result.summary_message.is_summary
    assert result.summary_message.role == "user"
    assert "Extractive" in content
    for heading in EN.values():
        assert heading in content.splitlines()
    assert "Make PersonName3 iterable" in section(content, EN["goal"])[0]
    assert any(line.startswith("ran `") for line in section(content, EN["done"]))
    assert result.tokens_after < result.tokens_before
    assert result.summary_message in result.messages
    # Deterministic end to end.
    again = compact(load_pydicom(), config, OfflineSummarizer(), reason="manual")
    assert again.summary_text == result.summary_text


def test_compact_tiny_chinese_middle_with_offline_summarizer() -> None:
    messages = [
        system("s"),
        assistant("好"),
        assistant("嗯"),
        user("继续"),
        assistant("好的"),
        user("谢谢"),
        assistant("不客气"),
    ]
    config = CompactionConfig(
        context_window=1000, protect_first_n=1, summary_language="zh", tail_token_budget_ratio=0.01
    )
    result = compact(messages, config, OfflineSummarizer(), reason="manual")
    assert result.summarized
