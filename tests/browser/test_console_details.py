"""The seeds' last details in the console (issue 23): the status line's hover breakdown follows
every token_update (it stayed at the figures of the page's load); a system prompt alone over the
threshold is refused with the advice to shorten it, in Chinese and English, and the message is
not stored; the status line says which channel answers the session's turns, and why, and
links to the agent's setting."""

from __future__ import annotations

import re
import uuid
from typing import Any

from playwright.sync_api import Page, expect

from tests.browser.conftest import CHAT_KEY, Console, Stack
from tests.browser.pages import replies, send, session_at
from tests.browser.test_console_settings import agent_of


def breakdown_after_hover(page: Page) -> str:
    page.get_by_test_id("status-text").hover()
    breakdown = page.get_by_test_id("status-breakdown")
    expect(breakdown).to_be_visible()
    return breakdown.inner_text()


def roles(stack: Stack, session: str) -> dict[str, int]:
    stats: dict[str, Any] = stack.api.get(f"/api/sessions/{session}/context-stats").json()
    by_role: dict[str, int] = stats["tokensByRole"]
    return by_role


def test_the_hover_breakdown_follows_each_turn(console: Console) -> None:
    stack = console.stack
    session = session_at(console, 0.3)
    page = console.open(session)
    before = roles(stack, session)
    assert f"input (user): {before['user']:,}" in breakdown_after_hover(page)
    shown = replies(page).count()

    send(page, "And the sequences: which value do they start from after the copy?")
    expect(replies(page)).to_have_count(shown + 1)
    after = roles(stack, session)
    assert after["user"] > before["user"] and after["assistant"] > before["assistant"]
    breakdown = page.get_by_test_id("status-breakdown")
    page.get_by_test_id("status-text").hover()
    # the true figures of the session after the turn, not the page's first ones
    expect(breakdown).to_contain_text(f"input (user): {after['user']:,}")
    expect(breakdown).to_contain_text(f"output (assistant): {after['assistant']:,}")
    console.shot("breakdown-after-turn")


def over_the_threshold(stack: Stack) -> str:
    """A session of a 4,000-token window (a 2,800-token threshold) whose two system messages,
    each under it, are together over it."""
    return stack.session(
        [
            {"role": "system", "content": "s" * 6_000},
            {"role": "system", "content": "t" * 6_000},
        ],
        window=4_000,
    )


def history(stack: Stack, session: str) -> list[tuple[str, str]]:
    return [(s.message.role, s.message.content) for s in stack.store.load_history(session)]


def test_a_system_prompt_over_the_threshold_gets_the_advice_in_chinese(
    console_zh: Console,
) -> None:
    stack = console_zh.stack
    session = over_the_threshold(stack)
    before = history(stack, session)
    page = console_zh.open(session)
    shown = page.get_by_test_id("message").count()
    send(page, "请帮我修复构建失败的问题。")
    note = page.locator("[data-pending=failed] .pending-note")
    expect(note).to_contain_text("发送失败：系统提示过长")
    expect(note).to_contain_text("请精简系统提示")
    expect(page.get_by_test_id("error-banner")).to_contain_text("请精简系统提示")
    console_zh.shot("system-prompt-zh")
    assert history(stack, session) == before  # nothing stored, nothing left unanswered
    page.reload()
    page.locator("[data-testid=connection-status][data-state=open]").wait_for()
    expect(page.get_by_test_id("message")).to_have_count(shown)


def test_a_system_prompt_over_the_threshold_gets_the_advice_in_english(console: Console) -> None:
    stack = console.stack
    session = over_the_threshold(stack)
    before = history(stack, session)
    page = console.open(session)
    send(page, "Please fix the failing build.")
    note = page.locator("[data-pending=failed] .pending-note")
    expect(note).to_contain_text("Not sent: the system prompt alone reaches")
    expect(note).to_contain_text("shorten the system prompt")
    page.get_by_test_id("error-dismiss").click()
    page.get_by_test_id("message-input").fill("/compact")
    page.get_by_test_id("message-input").press("Enter")
    banner = page.get_by_test_id("error-banner")
    expect(banner).to_contain_text("shorten the system prompt")
    expect(banner).not_to_contain_text("nothing to compact")
    console.shot("system-prompt-en")
    assert history(stack, session) == before
    assert stack.api.get(f"/api/sessions/{session}/runs").json()["runs"] == []


def test_the_status_line_says_which_channel_answers(console: Console) -> None:
    stack = console.stack
    session = session_at(console, 0.3)
    page = console.open(session)
    answering = page.get_by_test_id("chat-channel")
    expect(answering).to_have_attribute("data-source", "system")
    expect(answering).to_have_text("Answered by chat-fake (fake-chat)")
    expect(answering).to_have_attribute(
        "title", re.compile(r"^the system's default \(COMPACTION_CHAT_CHANNEL\)\nClick to choose")
    )
    console.shot("answering-system")

    name = f"writer-{uuid.uuid4().hex[:6]}"
    stack.store.add_channel(
        name,
        provider="openai-compatible",
        model="writer-model",
        base_url=stack.chat.url_for("openai-compatible"),
        api_key=CHAT_KEY,
    )
    page.reload()
    expect(answering).to_have_attribute("data-source", "system")  # a new channel changes nothing
    chosen = stack.api.put(f"/api/agents/{agent_of(stack, session)}", json={"chatChannel": name})
    assert chosen.status_code == 200, chosen.text
    page.reload()
    expect(answering).to_have_attribute("data-source", "agent")
    expect(answering).to_have_text(f"Answered by {name} (writer-model)")
    expect(answering).to_have_attribute("title", re.compile(r"^the agent's chat channel\n"))
    answering.click()
    expect(page.get_by_test_id("settings-panel")).to_be_visible()
    select = page.get_by_test_id("agent-chat-channel")  # the agent's setting, in view
    expect(select).to_be_focused()
    console.shot("answering-agent")
    select.select_option(label="chat-fake · fake-chat")
    page.get_by_test_id("agent-save").click()
    expect(answering).to_have_text("Answered by chat-fake (fake-chat)")  # saved: drawn again
    expect(answering).to_have_attribute("data-source", "agent")
    select.select_option(label=f"{name} · writer-model")
    page.get_by_test_id("agent-save").click()
    expect(answering).to_have_text(f"Answered by {name} (writer-model)")
    page.get_by_test_id("lang-select").select_option("zh")
    expect(answering).to_have_text(f"回复：{name}（writer-model）")
    expect(answering).to_have_attribute("title", re.compile(r"^智能体选择的对话渠道\n点击"))
