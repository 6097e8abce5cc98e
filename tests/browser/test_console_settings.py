"""The console's settings in a real browser (seed §8.5, §8.6, §11): the agent's compaction
settings save and come back after a reload (blank inherits), the channel form saves, edits and
removes a channel whose key is never shown; the token dialog; the language switch.
"""

from __future__ import annotations

import re
import uuid

from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import Console, Stack, browser_page, screenshot
from tests.browser.pages import session_at

SECRET = "sk-browser-secret-0123456789abcdef"


def open_settings(page: Page) -> None:
    page.get_by_test_id("settings-toggle").click()
    expect(page.get_by_test_id("settings-panel")).to_be_visible()
    expect(page.get_by_test_id("agent-form")).to_be_visible()


def agent_of(stack: Stack, session: str) -> str:
    agent: str = stack.api.get(f"/api/sessions/{session}").json()["agentId"]
    return agent


def expect_form(page: Page, threshold: str | None, head: str, aux: str) -> None:
    """The agent form after a reload: ``threshold`` None is "inherit" checked."""
    page.reload()
    open_settings(page)
    inherit = page.get_by_test_id("agent-threshold-inherit")
    if threshold is None:
        expect(inherit).to_be_checked()
        expect(page.get_by_test_id("agent-threshold-effective")).to_contain_text("70%")
    else:
        expect(inherit).not_to_be_checked()
        expect(page.get_by_test_id("agent-threshold")).to_have_value(threshold)
    expect(page.get_by_test_id("agent-protect-head")).to_have_value(head)
    expect(page.get_by_test_id("agent-aux-select")).to_have_value(aux)


def save_agent(page: Page, shown_threshold: int) -> None:
    page.get_by_test_id("agent-save").click()
    expect(page.get_by_test_id("agent-save-status")).to_have_text("Saved")
    expect(page.get_by_test_id("threshold-tick")).to_have_attribute(
        "title", f"Auto-compaction threshold {shown_threshold}%"
    )


def test_agent_settings_save_and_come_back(console: Console) -> None:
    stack = console.stack
    session = session_at(console, 0.3)
    agent = agent_of(stack, session)
    page = console.open(session)
    expect_form(page, None, "", "")
    expect(page.get_by_test_id("agent-id")).to_have_text(f"agent: {agent}")
    strategy = page.get_by_test_id("agent-strategy-select")
    expect(strategy).to_have_value("lossy")
    expect(strategy.locator("option[disabled]")).to_contain_text("more strategies in development")
    slider = page.get_by_test_id("agent-threshold")
    for name, value in {"min": "30", "max": "95", "step": "5"}.items():
        expect(slider).to_have_attribute(name, value)

    page.get_by_test_id("agent-threshold-inherit").uncheck()
    slider.focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    expect(page.get_by_test_id("agent-threshold-value")).to_have_text("80%")
    page.get_by_test_id("agent-protect-head").fill("5")
    page.get_by_test_id("agent-aux-select").select_option(str(stack.aux_channel.id))
    save_agent(page, 80)
    saved = stack.store.get_agent(agent)
    assert saved is not None
    assert saved.compaction_threshold_percent == 80
    assert saved.compaction_protect_first_n == 5
    assert saved.auxiliary_model_channel_id == stack.aux_channel.id
    console.shot("agent-saved")
    expect_form(page, "80", "5", str(stack.aux_channel.id))

    # blank again: the system's settings apply
    page.get_by_test_id("agent-threshold-inherit").check()
    page.get_by_test_id("agent-protect-head").fill("")
    page.get_by_test_id("agent-aux-select").select_option("")
    save_agent(page, 70)
    expect_form(page, None, "", "")
    cleared = stack.store.get_agent(agent)
    assert cleared is not None
    assert cleared.compaction_threshold_percent is None
    assert cleared.compaction_protect_first_n is None
    assert cleared.auxiliary_model_channel_id is None


def test_a_token_budget_replaces_the_percentage(console: Console) -> None:
    """The budget saves through the form, shows after a reload, sets the session's threshold
    in tokens instead of the percentage (12,000 x 70% = 8,400), and blank clears it."""
    stack = console.stack
    session = session_at(console, 0.3)
    agent = agent_of(stack, session)
    page = console.open(session)
    open_settings(page)
    budget = page.get_by_test_id("agent-token-budget")
    slider = page.get_by_test_id("agent-threshold")
    threshold_effective = page.get_by_test_id("agent-threshold-effective")
    expect(budget).to_have_value("")
    expect(page.get_by_test_id("agent-budget-effective")).to_have_text(
        "Effective: none, the percentage threshold applies (system setting COMPACTION_TOKEN_BUDGET)"
    )
    budget.fill("5000")
    expect(slider).to_have_class(re.compile(r"\boverridden\b"))
    expect(threshold_effective).to_have_text(
        "Not used: the token budget (5,000 tokens) replaces the percentage"
    )
    page.get_by_test_id("agent-save").click()
    expect(page.get_by_test_id("agent-save-status")).to_have_text("Saved")
    assert stack.api.get(f"/api/agents/{agent}").json()["tokenBudget"] == 5000
    stats = stack.api.get(f"/api/sessions/{session}/context-stats").json()
    assert (stats["tokenBudget"], stats["thresholdTokens"]) == (5000, 5000)

    page.reload()
    open_settings(page)
    expect(budget).to_have_value("5000")
    expect(page.get_by_test_id("agent-budget-effective")).to_have_text(
        "Effective: 5,000 tokens (the agent's own)"
    )
    expect(slider).to_have_class(re.compile(r"\boverridden\b"))
    console.shot("token-budget-saved")
    page.get_by_test_id("lang-select").select_option("zh")
    expect(page.locator("label[for=agent-budget]")).to_have_text("Token 预算（固定阈值）")
    expect(threshold_effective).to_have_text("未使用：Token 预算（5,000 tokens）取代了百分比阈值")
    page.get_by_test_id("lang-select").select_option("en")

    budget.fill("")
    expect(slider).not_to_have_class(re.compile(r"\boverridden\b"))
    page.get_by_test_id("agent-save").click()
    expect(page.get_by_test_id("agent-save-status")).to_have_text("Saved")
    assert stack.api.get(f"/api/agents/{agent}").json()["tokenBudget"] is None
    stats = stack.api.get(f"/api/sessions/{session}/context-stats").json()
    assert (stats["tokenBudget"], stats["thresholdTokens"]) == (None, 8400)
    expect(threshold_effective).to_contain_text("Effective: 70%")
    page.reload()
    open_settings(page)
    expect(budget).to_have_value("")


def test_channel_form_saves_edits_and_removes(console: Console) -> None:
    stack = console.stack
    name = f"deepseek-{uuid.uuid4().hex[:6]}"
    page = console.open(session_at(console, 0.3))
    open_settings(page)
    page.get_by_test_id("channel-add").click()
    expect(page.get_by_test_id("channel-form")).to_be_visible()
    page.get_by_test_id("channel-name").fill(name)
    page.get_by_test_id("channel-provider").select_option("deepseek")
    page.get_by_test_id("channel-model").fill("deepseek-chat")
    page.get_by_test_id("channel-base-url").fill("https://api.deepseek.com/v1")
    page.get_by_test_id("channel-api-key").fill(SECRET)
    page.get_by_test_id("channel-auxiliary").check()
    page.get_by_test_id("channel-save").click()

    item = page.locator(f"[data-testid=channel-item][data-name='{name}']")
    expect(item).to_be_visible()
    expect(item.get_by_test_id("channel-auxiliary-tag")).to_be_visible()
    expect(item.get_by_test_id("channel-default-tag")).to_have_count(0)
    expect(item).to_contain_text(re.compile(r"deepseek · deepseek-chat · .*sk-…cdef"))
    assert SECRET not in page.content()
    console.shot("channel-added")

    page.reload()
    open_settings(page)
    expect(item).to_be_visible()
    expect(page.get_by_test_id("agent-aux-select").locator("option")).to_contain_text([name])
    item.get_by_test_id("channel-edit").click()
    expect(page.get_by_test_id("channel-form-title")).to_have_text(f"Edit channel {name}")
    key = page.get_by_test_id("channel-api-key")
    expect(key).to_have_value("")
    expect(key).to_have_attribute("placeholder", "saved sk-…cdef; leave blank to keep")
    page.get_by_test_id("channel-model").fill("deepseek-reasoner")
    page.get_by_test_id("channel-save").click()
    expect(item).to_contain_text("deepseek-reasoner")
    channel_id = int(item.get_attribute("data-channel-id") or 0)
    stored = stack.store.get_channel(channel_id)
    assert stored.model == "deepseek-reasoner"
    assert stored.api_key is not None and stored.api_key.get_secret_value() == SECRET

    item.get_by_test_id("channel-remove").click()
    expect(item).to_have_count(0)
    expect(page.get_by_test_id("channel-message")).to_have_text(f"Channel {name} removed")


def test_the_token_dialog(browser: Browser, stack: Stack) -> None:
    """A browser that has no token is asked for it once, then keeps it."""
    with browser_page(browser, "test_the_token_dialog") as page:
        page.goto(stack.url)
        dialog = page.get_by_test_id("token-dialog")
        expect(dialog).to_be_visible()
        screenshot(page, "test_the_token_dialog-asked")
        page.get_by_test_id("token-input").fill(stack.token)
        page.get_by_test_id("token-submit").click()
        expect(dialog).to_be_hidden()
        expect(page.get_by_test_id("session-item").first).to_be_visible()
        page.reload()
        expect(page.locator("[data-testid=connection-status][data-state=open]")).to_be_visible()
        expect(dialog).to_be_hidden()


def test_the_language_follows_the_browser_and_switches(console_zh: Console) -> None:
    page = console_zh.open(session_at(console_zh, 0.3))
    expect(page.get_by_role("heading", level=1)).to_have_text("上下文压缩控制台")
    expect(page.get_by_test_id("status-text")).to_contain_text("阈值 70% · 已压缩 0 次")
    page.get_by_test_id("lang-select").select_option("en")
    expect(page.get_by_role("heading", level=1)).to_have_text("Context compaction console")
    expect(page.get_by_test_id("status-text")).to_contain_text("threshold 70% · compacted 0 times")
    page.reload()
    expect(page.get_by_test_id("status-text")).to_contain_text("threshold 70%")
    expect(page.get_by_test_id("lang-select")).to_have_value("en")
