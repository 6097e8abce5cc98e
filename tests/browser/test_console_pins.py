"""Pins in a real browser (docs/architecture.md, "Pins"): a message's pin toggle, reached and
pressed with the keyboard, marks it pinned (an icon with its aria-label) and its tokens show in
the status line's breakdown; after ``/compact`` the pinned message is still shown, not folded;
a pin over the threshold is refused with its code's text and nothing changes; the texts in
Chinese."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import Locator, Page, expect

from tests.browser.conftest import Console
from tests.browser.pages import SUMMARY, bubbles, session_at


def message(page: Page, message_id: int) -> Locator:
    return page.locator(f"[data-testid=message][data-id='{message_id}']")


def history(console: Console, session_id: str, view: str = "compacted") -> list[dict[str, Any]]:
    answer = console.stack.api.get(f"/api/sessions/{session_id}/history", params={"view": view})
    rows: list[dict[str, Any]] = answer.json()["messages"]
    return rows


def test_pin_a_message_then_compact_it_stays(console: Console) -> None:
    session_id = session_at(console, 0.4)
    rows = history(console, session_id)
    target = next(r for r in rows[6:] if r["role"] == "user")  # in the middle
    page = console.open(session_id)
    toggle = message(page, target["id"]).get_by_test_id("pin-toggle")
    expect(toggle).to_have_attribute("aria-pressed", "false")
    expect(toggle).to_have_attribute("aria-label", "Pin this message: compaction keeps it verbatim")
    toggle.focus()  # a real button: in the tab order
    page.keyboard.press("Enter")

    pinned = message(page, target["id"])
    expect(pinned).to_have_attribute("data-pinned", "true")
    mark = pinned.get_by_test_id("pinned-tag")
    expect(mark).to_have_attribute(
        "aria-label", "pinned: compaction never summarizes or prunes this message"
    )
    expect(pinned.get_by_test_id("pin-toggle")).to_have_attribute("aria-pressed", "true")
    expect(page.get_by_test_id("status-text")).to_have_attribute(
        "title", re.compile(r"\npinned: \d[\d,]*")
    )
    pinned.scroll_into_view_if_needed()
    console.shot("pinned")

    page.get_by_test_id("compact-button").click()
    expect(bubbles(page, "done")).to_have_count(1)
    page.reload()
    page.locator("[data-testid=context-bar]:not([data-band=none])").wait_for()
    expect(page.get_by_test_id("summary-message")).to_have_count(1)
    kept = message(page, target["id"])
    expect(kept).to_be_visible()
    expect(kept).to_have_attribute("data-pinned", "true")
    expect(kept).not_to_have_class(re.compile(r"\bcompacted\b"))
    expect(kept).to_contain_text(target["content"])
    compacted = history(console, session_id)
    ids = [r["id"] for r in compacted]
    summary = next(i for i, r in enumerate(compacted) if r["isCompactionSummary"])
    assert compacted[summary]["content"].startswith(SUMMARY)
    assert ids.index(target["id"]) < summary  # in place: before the summary
    kept.scroll_into_view_if_needed()
    console.shot("after-compact")


def test_a_pin_over_the_threshold_is_refused(console: Console) -> None:
    """An 8,400-token threshold: one ~4,500-token message pins, a second would reach it."""
    big = "Keep this paragraph about the orders table's migration plan intact. " * 300
    messages = [{"role": "system", "content": "You help a team move its tables."}]
    for i in range(4):
        messages += [
            {"role": "user", "content": f"Part {i}: {big}"},
            {"role": "assistant", "content": f"Noted part {i}."},
        ]
    session_id = console.stack.session(messages, window=12_000)
    ids = [r["id"] for r in history(console, session_id) if r["role"] == "user"]
    page = console.open(session_id)
    message(page, ids[0]).get_by_test_id("pin-toggle").click()
    expect(message(page, ids[0])).to_have_attribute("data-pinned", "true")
    message(page, ids[1]).get_by_test_id("pin-toggle").click()
    expect(page.get_by_test_id("error-banner")).to_contain_text(
        "Could not pin: the pinned messages with the system prompt would reach the compaction "
        "threshold: unpin some first"
    )
    expect(message(page, ids[1])).not_to_have_attribute("data-pinned", "true")
    assert [r["id"] for r in history(console, session_id) if r["pinned"]] == [ids[0]]
    console.shot("refused")


def test_the_pin_texts_in_chinese(console_zh: Console) -> None:
    session_id = session_at(console_zh, 0.3)
    target = history(console_zh, session_id)[3]
    page = console_zh.open(session_id)
    toggle = message(page, target["id"]).get_by_test_id("pin-toggle")
    expect(toggle).to_have_text("固定")
    toggle.click()
    expect(message(page, target["id"]).get_by_test_id("pin-toggle")).to_have_text("取消固定")
    expect(message(page, target["id"]).get_by_test_id("pinned-tag")).to_have_attribute(
        "aria-label", "已固定：压缩不会总结或裁剪这条消息"
    )
    message(page, target["id"]).scroll_into_view_if_needed()
    console_zh.shot("zh")
