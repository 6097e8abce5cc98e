"""The console in a real browser, compacting (seed §11's end-to-end checklist): automatic
compaction when a message takes the conversation past the threshold (the bar turns blue, the
bubbles appear and resolve), ``/compact`` from the input box and from the button, the summary
drawer, the view toggle and its banner, a message typed during a compaction sent after it, the
bubbles after a reload, a request that compacts the history and then the task's tool loop.
"""

from __future__ import annotations

import re
import uuid

from playwright.sync_api import Page, expect

from tests.browser.conftest import REPLY, Console
from tests.browser.pages import (
    DONE,
    LOOP_DONE,
    LOOP_SUMMARY,
    SUMMARY,
    bubbles,
    replies,
    send,
    session_at,
    two_stage_session,
    view_toggle,
)
from tests.llm_server import Reply

#: about 900 tokens: takes a conversation at 64-66% of the window past the 70% threshold
LONG = "Before we go on, please also list what could go wrong with the sequences. " * 48

BAR = "document.querySelector('[data-testid=context-bar]')"
#: what the page shows at one moment (a compaction lasts two seconds: one look at all of it)
WHILE_COMPACTING = f"""() => {{
  const fill = getComputedStyle({BAR}.querySelector('.fill'));
  const all = (testid, f) => [...document.querySelectorAll(`[data-testid=${{testid}}]`)].map(f);
  return {{
    fill: fill.backgroundImage,
    animation: fill.animationName,
    status: document.querySelector('[data-testid=status-text]').textContent,
    bubbles: all('compaction-bubble', (n) => n.dataset.state),
    pending: all('pending-note', (n) => n.textContent),
  }};
}}"""


def test_a_message_past_the_threshold_compacts_first(console: Console) -> None:
    """The pre-call check: the bar is green under the threshold; a long message takes the
    conversation past it, so the gateway compacts (blue bar, a start bubble, then the done
    bubble) before the model answers from the compacted view."""
    stack = console.stack
    stack.aux.script(Reply(delay_s=2.0))  # long enough to see the compaction running
    page = console.open(session_at(console, 0.64))
    bar = page.get_by_test_id("context-bar")
    expect(bar).to_have_attribute("data-band", "green")
    expect(page.get_by_test_id("status-text")).to_have_text(
        re.compile(r"^7,[\d]{3}/12,000 tokens · threshold 70% · compacted 0 times$")
    )
    send(page, LONG)

    page.wait_for_function(f"() => {BAR}.dataset.band === 'compacting'")  # a function: CSP
    assert page.evaluate(WHILE_COMPACTING) == {
        "fill": "linear-gradient(90deg, rgb(64, 158, 255), rgb(160, 207, 255), "
        "rgb(64, 158, 255), rgb(160, 207, 255))",
        "animation": "flow",
        "status": "Compacting context...",
        "bubbles": ["start"],
        "pending": ["waiting for the reply…"],
    }
    console.shot("compacting")
    expect(bubbles(page, "done").get_by_test_id("bubble-text")).to_have_text(DONE)
    expect(bubbles(page, "start")).to_have_count(0)
    expect(replies(page).last).to_contain_text(REPLY)
    expect(page.get_by_test_id("pending-note")).to_have_count(0)
    expect(bar).to_have_attribute("data-band", "green")
    expect(page.get_by_test_id("status-text")).to_contain_text("compacted 1 time")
    # the model read the compacted view: the summary, not the conversation it replaced
    assert SUMMARY in stack.chat.bodies_text()
    assert "batch 2:" not in stack.chat.bodies_text()
    console.shot("after-auto-compaction")


def test_a_message_typed_during_a_compaction_is_sent_after_it(console: Console) -> None:
    stack = console.stack
    stack.aux.script(Reply(delay_s=2.0))
    page = console.open(
        session_at(console, 0.64, session_id=f"db-migration-{uuid.uuid4().hex[:4]}")
    )
    page.get_by_test_id("compact-button").click()
    expect(bubbles(page, "start")).to_have_count(1)
    send(page, "And the refunds table?")
    expect(page.get_by_test_id("pending-note")).to_be_visible()
    assert stack.chat.requests == []  # the turn waits for the compaction
    expect(bubbles(page, "done")).to_have_count(1)
    expect(replies(page).last).to_contain_text(REPLY)
    assert len(stack.chat.requests) == 1
    assert SUMMARY in stack.chat.bodies_text()  # answered from the compacted view
    order = page.locator("[data-testid=compaction-bubble], [data-role=assistant]")
    texts = order.evaluate_all("nodes => nodes.map(n => n.dataset.testid)")
    assert texts[-2:] == ["compaction-bubble", "message"]  # the done bubble, then the reply
    console.shot("sent-after")


def test_compact_typed_in_the_input_box_is_a_command(console: Console) -> None:
    """``/compact <focus>`` compacts with that focus and is not sent as a message; the done
    bubble opens the summary in the drawer, rendered."""
    session = session_at(console, 0.64)
    page = console.open(session)
    send(page, "/compact the foreign keys")
    expect(bubbles(page, "done").get_by_test_id("bubble-text")).to_have_text(DONE)
    expect(page.get_by_test_id("pending-note")).to_have_count(0)
    expect(page.get_by_test_id("message").filter(has_text="/compact")).to_have_count(0)
    assert "the foreign keys" in console.stack.aux.bodies_text()
    assert console.stack.chat.requests == []
    history = console.stack.api.get(f"/api/sessions/{session}/history?view=full").json()
    assert not [r for r in history["messages"] if "/compact" in (r["content"] or "")]

    bubbles(page, "done").get_by_test_id("bubble-view-summary").click()
    drawer = page.get_by_test_id("summary-drawer")
    expect(drawer).to_be_visible()
    content = page.get_by_test_id("summary-content")
    expect(content.get_by_role("heading", name="Goal")).to_be_visible()
    expect(content.locator("li", has_text="Inspected the repository")).to_be_visible()
    console.shot("summary-drawer")
    page.keyboard.press("Escape")
    expect(drawer).to_be_hidden()
    bubbles(page, "done").get_by_test_id("bubble-view-summary").click()
    page.get_by_test_id("drawer-close").click()
    expect(drawer).to_be_hidden()


def test_the_button_compacts_and_a_reload_keeps_the_bubble(console: Console) -> None:
    page = console.open(session_at(console, 0.64))
    page.get_by_test_id("compact-button").click()
    done = bubbles(page, "done").get_by_test_id("bubble-text")
    expect(done).to_have_text(DONE)
    said = done.inner_text()
    expect(page.get_by_test_id("status-text")).to_contain_text("compacted 1 time")

    page.reload()
    expect(bubbles(page)).to_have_count(1)
    expect(done).to_have_text(said)
    bubbles(page, "done").get_by_test_id("bubble-view-summary").click()
    content = page.get_by_test_id("summary-content")
    expect(content.get_by_role("heading", name="Next steps")).to_be_visible()
    console.shot("after-reload")


def test_the_full_view_toggle_and_its_banner(console: Console) -> None:
    session = session_at(console, 0.64)
    page = console.open(session)
    page.get_by_test_id("compact-button").click()
    expect(bubbles(page, "done")).to_have_count(1)
    run = console.stack.api.get(f"/api/sessions/{session}/runs").json()["runs"][-1]
    banner = page.get_by_test_id("full-view-banner")
    expect(banner).to_be_hidden()
    compacted = page.locator("[data-compacted=true]")
    expect(compacted).to_have_count(0)

    view_toggle(page, session).click()
    expect(banner).to_be_visible()
    expect(banner).to_contain_text("Showing the full history (compacted messages included)")
    expect(compacted).to_have_count(run["removedCount"])
    expect(compacted.first.get_by_test_id("compacted-tag")).to_have_text("compacted")
    compacted.last.scroll_into_view_if_needed()
    expect(banner).to_be_in_viewport()  # sticky
    console.shot("full-view")

    page.get_by_test_id("banner-back").click()
    expect(banner).to_be_hidden()
    expect(compacted).to_have_count(0)


def test_a_two_stage_request_shows_both_stages(console: Console) -> None:
    """The history alone leaves the session over its threshold, so the loop stage follows in
    the same request (docs/architecture.md, "The job"): the history's done bubble stays when the
    loop's start comes, each done opens its own summary, and a reload shows the same two. While
    the loop stage runs, the status line names it."""
    # the history's summary at once, the loop's after a while: long enough to see it running
    console.stack.aux.script(Reply(), Reply(delay_s=2.0))
    page = console.open(two_stage_session(console))
    page.get_by_test_id("compact-button").click()
    expect(page.get_by_test_id("status-text")).to_have_text("Compacting the task's tool steps...")
    expect(page.get_by_test_id("context-bar")).to_have_attribute("data-band", "compacting")
    expect(bubbles(page, "done")).to_have_count(1)  # the history's, kept beside the loop's start
    done = bubbles(page, "done")
    expect(done).to_have_count(2)
    expect(bubbles(page, "start")).to_have_count(0)
    expect(page.get_by_test_id("context-bar")).not_to_have_attribute("data-band", "compacting")
    console.shot("two-stages")

    both_stages_done(page)
    page.reload()  # the same two from the history's rows
    expect(bubbles(page)).to_have_count(2)
    both_stages_done(page)


def both_stages_done(page: Page) -> None:
    """The history's done bubble, then the loop's, each opening its own summary."""
    done = bubbles(page, "done")
    assert done.evaluate_all("nodes => nodes.map(n => n.dataset.stage)") == ["history", "loop"]
    expect(done.get_by_test_id("bubble-text")).to_have_text([DONE, LOOP_DONE])
    for index, marker in enumerate((SUMMARY, LOOP_SUMMARY)):
        done.nth(index).get_by_test_id("bubble-view-summary").click()
        expect(page.get_by_test_id("summary-content")).to_contain_text(marker)
        page.get_by_test_id("drawer-close").click()
