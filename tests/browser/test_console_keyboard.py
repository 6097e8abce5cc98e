"""The console by keyboard (issue 23): a skip link first in the tab order takes focus to the
message input; focus stays on the session a person opened (the list is drawn again under it)
and comes back to what opened the summary drawer when it closes; tool results take one tab
stop per group, the arrow keys move within it."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.browser.conftest import Console
from tests.browser.pages import bubbles, session_at, two_stage_session


def focused_testid(page: Page) -> str | None:
    testid: str | None = page.evaluate("() => document.activeElement?.dataset?.testid ?? null")
    return testid


def test_the_skip_link_comes_first_and_goes_to_the_input(console: Console) -> None:
    session = session_at(console, 0.3)
    page = console.open(session)
    page.locator("body").focus()
    page.keyboard.press("Tab")
    link = page.get_by_test_id("skip-link")
    expect(link).to_be_focused()
    expect(link).to_have_text("Skip to the message input")
    expect(link).to_be_in_viewport()  # shown while focused
    console.shot("skip-link")
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("message-input")).to_be_focused()
    assert page.evaluate("() => location.hash") == f"#session={session}"  # unchanged


def test_focus_stays_on_the_session_opened(console: Console) -> None:
    first = session_at(console, 0.3)
    second = session_at(console, 0.3)
    page = console.open(first)
    item = page.locator(f"[data-testid=session-item][data-session-id='{second}']")
    item.get_by_test_id("session-open").focus()
    page.keyboard.press("Enter")
    expect(item).to_have_class("session current")
    expect(page.get_by_test_id("connection-status")).to_have_attribute("data-state", "open")
    expect(item.get_by_test_id("session-open")).to_be_focused()
    page.keyboard.press("Tab")  # on to the same session's next control
    expect(item.get_by_test_id("session-rename")).to_be_focused()


def test_closing_the_drawer_gives_focus_back(console: Console) -> None:
    page = console.open(session_at(console, 0.64))
    page.get_by_test_id("compact-button").click()
    view = bubbles(page, "done").get_by_test_id("bubble-view-summary")
    expect(view).to_be_visible()
    view.focus()
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("summary-drawer")).to_be_visible()
    expect(page.get_by_test_id("drawer-close")).to_be_focused()
    page.keyboard.press("Escape")
    expect(page.get_by_test_id("summary-drawer")).to_be_hidden()
    expect(view).to_be_focused()

    page.keyboard.press("Enter")  # again, closed by its button
    expect(page.get_by_test_id("drawer-close")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("summary-drawer")).to_be_hidden()
    expect(view).to_be_focused()


def test_tool_results_take_one_tab_stop_per_group(console: Console) -> None:
    """24 tool steps after one request: one tab stop, not 24; the arrows walk them; Tab
    leaves the group."""
    page = console.open(two_stage_session(console, window=16_000))
    summaries = page.locator("details.tool-result > summary")
    expect(summaries).to_have_count(24)
    stops = summaries.evaluate_all("ns => ns.filter(n => n.tabIndex >= 0).length")
    assert stops == 1
    summaries.first.focus()
    page.keyboard.press("ArrowDown")
    expect(summaries.nth(1)).to_be_focused()
    page.keyboard.press("Enter")  # opens it
    expect(page.locator("details.tool-result").nth(1)).to_have_attribute("open", "")
    page.keyboard.press("ArrowUp")
    expect(summaries.first).to_be_focused()
    page.keyboard.press("Tab")
    assert focused_testid(page) != "tool-first-line"
    assert page.evaluate("() => !document.activeElement.closest('details.tool-result')")
    console.shot("tool-stops")
