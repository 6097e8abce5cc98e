"""Markup in a summary or a message shows as text (seed §8.3, the issue's security list): a
``<script>`` and an ``<img onerror=…>`` in the user's words, in the model's Markdown and in the
summary run nowhere; the window flag they would set stays unset.
"""

from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.conftest import Console
from tests.browser.pages import DONE, bubbles, session_at, view_toggle
from tests.llm_server import Reply

HOSTILE = '<img src=x onerror="window.pwned = 1"> then <script>window.pwned = 2</script>'
#: elements the hostile text would create if it were markup
INJECTED = "#messages img, #messages script, #summary-content img, #summary-content script"


def test_script_and_img_onerror_show_as_text(console: Console) -> None:
    summary = f"## Goal\n{HOSTILE}\n\n## Progress\n- **done**: {HOSTILE}\n" + "detail " * 30
    console.stack.aux.script(Reply(text=summary))
    session = session_at(
        console,
        0.5,
        extra=[
            {"role": "user", "content": HOSTILE},
            {"role": "assistant", "content": f"**Careful**: {HOSTILE}"},
        ],
    )
    page = console.open(session)
    shown = page.get_by_test_id("message").filter(has_text="<script>window.pwned = 2</script>")
    expect(shown).to_have_count(2)
    expect(shown.last.locator("strong")).to_have_text("Careful")  # Markdown still rendered

    page.get_by_test_id("compact-button").click()
    expect(bubbles(page, "done").get_by_test_id("bubble-text")).to_have_text(DONE)
    bubbles(page, "done").get_by_test_id("bubble-view-summary").click()
    content = page.get_by_test_id("summary-content")
    expect(content.get_by_role("heading", name="Goal")).to_be_visible()
    expect(content).to_contain_text('<img src=x onerror="window.pwned = 1">')
    expect(content.locator("li strong")).to_have_text("done")
    console.shot("summary")

    page.keyboard.press("Escape")
    view_toggle(page, session).click()  # the full view: the summary's card
    expect(page.get_by_test_id("full-view-banner")).to_be_visible()
    page.get_by_test_id("summary-message").locator("summary").click()
    expect(page.get_by_test_id("summary-message")).to_contain_text("<script>window.pwned = 2")
    assert page.locator(INJECTED).count() == 0
    assert page.evaluate("window.pwned") is None
