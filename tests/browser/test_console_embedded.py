"""A new user's first look (the issue's "tried as a new user would"): ``compaction gateway`` with
nothing configured, a browser at the address it printed, a bundled transcript on screen,
``/compact`` on the in-process worker with the offline summarizer, the summary in the drawer,
a message answered by the offline model. Its picture is the README's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import browser_page, keep_for_readme, screenshot, settle
from tests.browser.pages import LOOP_DONE, LOOP_SUMMARY, bubbles, replies, send
from tests.e2e.test_cli_gateway import gateway, new_user


@pytest.fixture(scope="module")
def embedded_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("embedded")
    with gateway(new_user(folder / "home"), folder) as (url, _process):
        yield url


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    # no token: the embedded gateway listens on the loopback only and asks for none
    with browser_page(browser, "embedded") as page:
        yield page


def test_a_new_user_sees_the_bundled_session_and_compacts_it(embedded_url: str, page: Page) -> None:
    page.goto(embedded_url)
    sessions = page.get_by_test_id("session-item")
    expect(sessions).to_have_count(2)
    expect(page.locator("[data-testid=session-item].current")).to_have_attribute(
        "data-session-id", "demo-en"
    )
    expect(page.get_by_test_id("context-bar")).to_have_attribute("data-band", "orange")
    expect(page.get_by_test_id("message").first).to_be_visible()
    expect(page.get_by_test_id("tool-call").first).to_be_visible()
    expect(page.get_by_test_id("token-dialog")).to_be_hidden()

    # the whole run follows one request: its loop is what compacts (docs/architecture.md,
    # "The job")
    page.get_by_test_id("compact-button").click()
    done = bubbles(page, "done")
    expect(done).to_have_attribute("data-stage", "loop")
    expect(done.get_by_test_id("bubble-text")).to_have_text(LOOP_DONE)
    # no channel configured: the offline summary, and the bubble says so
    expect(done.get_by_test_id("bubble-offline")).to_have_text(
        "offline summary: quoted from the turns, not written by a model"
    )
    done.get_by_test_id("bubble-view-summary").click()
    expect(page.get_by_test_id("summary-content")).to_contain_text(LOOP_SUMMARY)
    screenshot(page, "embedded-summary")
    page.get_by_test_id("drawer-close").click()

    send(page, "What did the fix change in pydicom?")
    expect(replies(page).last).to_contain_text("What did the fix change in pydicom?")
    expect(page.get_by_test_id("context-bar")).to_have_attribute("data-band", "green")
    # one compaction: "1 time", not "1 times"
    expect(page.get_by_test_id("status-text")).to_have_text(re.compile(r"compacted 1 time$"))
    page.mouse.move(640, 300)  # off the buttons: nothing hovered in the picture
    settle(page)
    keep_for_readme(screenshot(page, "embedded-mid-conversation"))
