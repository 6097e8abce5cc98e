"""The deterministic extractive summarizer (compaction/core/offline.py): the summary's shape, and
the summarizer through ``compact()``. What each section holds: test_offline_sections.py; updates and
the budget: test_offline_update.py; the loop's execution summary: test_offline_loop.py."""

from __future__ import annotations

import pytest

from compaction import CompactionConfig, compact, estimate_messages_tokens
from compaction.core.messages import SUMMARY_MARKER
from compaction.core.offline import OfflineSummarizer
from compaction.core.prompts import HEADINGS, Language, build_prompt
from tests.fakes import load_transcript
from tests.unit.builders import assistant, system, user
from tests.unit.offline_helpers import EN, NONE, conversation, request, section, summarize

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


# --------------------------------------------------------------------------- through compact()


def test_compact_real_transcript_with_offline_summarizer() -> None:
    # OpenHands on ponyc: a history (the task, then a reply the agent got as a user turn) and a
    # loop after the latest request; the history stage writes the history's headings.
    messages = load_transcript("openhands_ponyc-4588")
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
    assert "/workspace/ponylang__ponyc__0.1" in section(content, EN["goal"])[0]
    assert any(line.startswith("ran `") for line in section(content, EN["done"]))
    assert result.tokens_after < result.tokens_before
    assert result.summary_message in result.messages
    # Deterministic end to end.
    again = compact(
        load_transcript("openhands_ponyc-4588"), config, OfflineSummarizer(), reason="manual"
    )
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
