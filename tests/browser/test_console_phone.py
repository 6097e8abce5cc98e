"""The console in a phone-sized window, 390×844 (issue 23): never wider than the screen (no
sideways scrolling) with a long conversation, tool calls, a compaction, the summary drawer and
the settings panel open; the header wraps; the chat input sends a message and compacts."""

from __future__ import annotations

from playwright.sync_api import Page, ViewportSize, expect

from tests.browser.conftest import Console
from tests.browser.pages import bubbles, send, two_stage_session

PHONE: ViewportSize = {"width": 390, "height": 844}
#: a word longer than the screen: the message must wrap it, not widen the page
LONG_WORD = "x" * 300


def no_sideways_scroll(page: Page) -> None:
    sizes = page.evaluate(
        "() => [document.documentElement.scrollWidth, window.innerWidth, document.body.scrollWidth]"
    )
    assert sizes[0] <= sizes[1] and sizes[2] <= sizes[1], sizes


def inside_the_screen(page: Page, testid: str) -> None:
    box = page.get_by_test_id(testid).bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box


def test_a_phone_sized_window_never_scrolls_sideways(console: Console) -> None:
    page = console.page
    page.set_viewport_size(PHONE)
    console.open(two_stage_session(console, window=16_000))  # tool calls, long turns
    no_sideways_scroll(page)

    # the header wraps: the title on a line of its own, the controls below it
    title = page.locator(".topbar h1").bounding_box()
    toggle = page.get_by_test_id("settings-toggle").bounding_box()
    assert title and toggle and toggle["y"] >= title["y"] + title["height"] - 1
    for testid in ("settings-toggle", "lang-select", "message-input", "send-button"):
        expect(page.get_by_test_id(testid)).to_be_in_viewport()
        inside_the_screen(page, testid)
    console.shot("phone")

    send(page, f"A word that does not fit: {LONG_WORD}")
    expect(page.get_by_test_id("message").filter(has_text=LONG_WORD)).to_be_visible()
    no_sideways_scroll(page)

    send(page, "/compact")
    expect(bubbles(page, "done").first).to_be_visible()
    no_sideways_scroll(page)
    console.shot("phone-compacted")

    bubbles(page, "done").first.get_by_test_id("bubble-view-summary").click()
    expect(page.get_by_test_id("summary-drawer")).to_be_visible()
    inside_the_screen(page, "summary-drawer")
    inside_the_screen(page, "drawer-close")
    no_sideways_scroll(page)
    console.shot("phone-drawer")
    page.get_by_test_id("drawer-close").click()
    expect(page.get_by_test_id("summary-drawer")).to_be_hidden()

    page.get_by_test_id("settings-toggle").click()
    expect(page.get_by_test_id("settings-panel")).to_be_visible()
    inside_the_screen(page, "settings-panel")
    no_sideways_scroll(page)
    console.shot("phone-settings")
