"""Review before apply in a real browser (docs/architecture.md, "Review"): the Preview button
beside ``/compact`` shows a draft's card (the summary editable, the tokens before and after, the
receipt) while the conversation stays as it was; the edited text applied is the summary the
compacted view shows, with the usual done bubble. ``/compact --review`` typed in the input,
Regenerate with a focus, a draft made stale by a compaction in between (its refusal in the
console's words), Discard; the card in Chinese."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.browser.conftest import Console
from tests.browser.pages import DONE, SUMMARY, bubbles, send, session_at

EDITED = "Reviewed by the user: the orders and customers tables move first; keep the old ones."


def messages(page: Page) -> list[str]:
    return page.get_by_test_id("message").all_text_contents()


def test_preview_edit_then_apply_shows_the_edited_summary(console: Console) -> None:
    page = console.open(session_at(console, 0.5))
    before = messages(page)
    page.get_by_test_id("preview-button").click()

    review = page.get_by_test_id("review-card")
    expect(review).to_be_visible()
    expect(page.get_by_test_id("review-summary")).to_have_value(re.compile(re.escape(SUMMARY)))
    expect(page.get_by_test_id("review-figures")).to_have_text(
        re.compile(r"^~[\d,]+ → [\d,]+ tokens · replaces [1-9]\d* messages$")
    )
    expect(page.get_by_test_id("review-receipt")).to_have_text(
        re.compile(r"^Keeps \d+ of \d+ exact identifiers · \d+ of your \d+ instructions verbatim$")
    )
    expect(bubbles(page)).to_have_count(0)  # the start bubble ended with the draft
    assert messages(page) == before  # nothing applied: the conversation as it was
    console.shot("draft")

    page.get_by_test_id("review-summary").fill(EDITED)
    page.get_by_test_id("review-apply").click()

    expect(bubbles(page, "done").get_by_test_id("bubble-text")).to_have_text(DONE)
    expect(review).to_have_count(0)
    expect(page.get_by_test_id("summary-message")).to_have_count(1)
    expect(page.get_by_test_id("summary-message")).to_contain_text(EDITED)
    assert len(messages(page)) < len(before)  # the older messages folded into the summary
    console.shot("applied")


def test_typed_review_regenerate_stale_then_discard(console: Console) -> None:
    stack = console.stack
    session_id = session_at(console, 0.5)
    page = console.open(session_id)
    send(page, "/compact --review")
    review = page.get_by_test_id("review-card")
    expect(review).to_be_visible()
    first = review.get_attribute("data-draft-id")
    expect(page.get_by_test_id("message").filter(has_text="/compact")).to_have_count(0)

    page.get_by_test_id("review-focus").fill("the sequences")
    page.get_by_test_id("review-regenerate").click()
    expect(review).not_to_have_attribute("data-draft-id", first or "")
    assert "the sequences" in stack.aux.bodies_text()

    # a compaction in between: applying the draft now is refused, nothing changes
    assert stack.api.post(f"/api/sessions/{session_id}/compact").status_code == 202
    expect(bubbles(page, "done")).to_have_count(1)
    page.get_by_test_id("review-apply").click()
    expect(page.get_by_test_id("review-error")).to_contain_text(
        "The session changed since this draft and it no longer fits: not applied."
    )
    expect(page.get_by_test_id("summary-message")).to_have_count(1)
    console.shot("stale")

    page.get_by_test_id("review-discard").click()
    expect(review).to_have_count(0)
    drafts = stack.api.get(f"/api/sessions/{session_id}/drafts").json()["drafts"]
    assert [d["status"] for d in drafts] == ["discarded", "discarded"]


def test_the_card_in_chinese_and_after_a_reload(console_zh: Console) -> None:
    page = console_zh.open(session_at(console_zh, 0.5))
    expect(page.get_by_test_id("preview-button")).to_have_text("预览")
    page.get_by_test_id("preview-button").click()
    expect(page.get_by_test_id("review-apply")).to_have_text("应用")
    page.reload()
    expect(page.get_by_test_id("review-card")).to_be_visible()  # the ready draft, shown again
    expect(page.get_by_test_id("review-figures")).to_contain_text("替换")
    console_zh.shot("zh")
