"""The gate before an automatic compaction in a real browser (docs/architecture.md, "The gate"):
past the warning level a band above the input says how far the automatic compaction is and,
once two turns are recorded, about how many turns are left; "Compact now with a focus…" puts
``/compact`` in the input; "Not now" hides the band until the level changes. An ``ask`` agent
past its threshold is asked instead of compacted ("Not now" keeps the turns going uncompacted,
"Compact now" compacts); an ``off`` agent says only a message that would not fit compacts.
Screenshots: the warning band with its turns left, the question, "Not now", off mode."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.browser.conftest import REPLY, Console
from tests.browser.pages import DONE, bubbles, replies, send, session_at

TURNS_LEFT = re.compile(r"^Automatic compaction at 70% — about \d+ turns left\.$")
DUE = re.compile(
    r"^The context is at 7\d(\.\d)?%, past the 70% threshold: compact now\? "
    r"\"Not now\" waits until the next message would not fit\.$"
)
OFF = re.compile(r"^Automatic compaction is off — the context is at \d+(\.\d)?%")
#: about 260 tokens: a turn grows the context without taking it past 70%
TURN = "Also check the sequences of the orders table and what moves them. " * 12


def with_mode(console: Console, share: float, mode: str) -> str:
    """A session at ``share`` of its window whose agent's ``autoCompact`` is ``mode``."""
    session_id = session_at(console, share)
    agent = console.stack.store.get_session(session_id).agent_id
    answer = console.stack.api.put(f"/api/agents/{agent}", json={"autoCompact": mode})
    assert answer.status_code == 200, answer.text
    return session_id


def turn(page: Page, text: str, count: int) -> None:
    """One message sent; back once its reply is on screen."""
    send(page, text)
    expect(replies(page)).to_have_count(count)


def test_the_warning_band_with_turns_left(console: Console) -> None:
    page = console.open(session_at(console, 0.61))
    band = page.get_by_test_id("gate-band")
    gate_text = page.get_by_test_id("gate-text")
    # shown on load (context stats carry the warning); no turns recorded yet: no estimate
    expect(gate_text).to_have_text(re.compile(r"^Automatic compaction at 70% — the context"))
    expect(page.get_by_test_id("gate-now")).to_be_hidden()
    before = replies(page).count()
    turn(page, TURN, before + 1)
    turn(page, TURN, before + 2)
    expect(gate_text).to_have_text(TURNS_LEFT)
    expect(band).to_have_attribute("data-due", "false")
    console.shot("warning-band")
    page.get_by_test_id("gate-focus").click()
    expect(page.get_by_test_id("message-input")).to_have_value("/compact ")
    expect(page.get_by_test_id("message-input")).to_be_focused()
    page.get_by_test_id("message-input").fill("")
    page.get_by_test_id("gate-not-now").click()
    expect(band).to_be_hidden()
    turn(page, "One more small question.", before + 3)  # the same level: still hidden
    expect(band).to_be_hidden()
    assert bubbles(page).count() == 0


def test_ask_mode_asks_and_not_now_defers(console: Console) -> None:
    page = console.open(with_mode(console, 0.72, "ask"))
    band = page.get_by_test_id("gate-band")
    before = replies(page).count()
    turn(page, "Where were we?", before + 1)  # answered, not held: nothing compacts
    expect(page.get_by_test_id("gate-text")).to_have_text(DUE)
    expect(band).to_have_attribute("data-due", "true")
    expect(page.get_by_test_id("gate-now")).to_be_visible()
    expect(bubbles(page)).to_have_count(0)
    console.shot("ask")
    page.get_by_test_id("gate-not-now").click()
    expect(band).to_be_hidden()
    turn(page, "And the next table?", before + 2)
    expect(band).to_be_hidden()
    expect(bubbles(page)).to_have_count(0)
    console.shot("ask-not-now")
    # a new page forgets "Not now"; "Compact now" compacts
    page.reload()
    page.locator("[data-testid=connection-status][data-state=open]").wait_for()
    page.get_by_test_id("gate-now").click()
    expect(bubbles(page, "done").get_by_test_id("bubble-text")).to_have_text(DONE)
    expect(band).to_be_hidden()  # under the warning level after the compaction
    expect(replies(page).last).to_contain_text(REPLY)


def test_off_mode_waits_for_compact(console: Console) -> None:
    page = console.open(with_mode(console, 0.75, "off"))
    band = page.get_by_test_id("gate-band")
    before = replies(page).count()
    turn(page, "Where were we?", before + 1)
    expect(page.get_by_test_id("gate-text")).to_have_text(OFF)
    expect(band).to_have_attribute("data-mode", "off")
    expect(page.get_by_test_id("gate-now")).to_be_hidden()
    expect(bubbles(page)).to_have_count(0)
    console.shot("off")


def test_settings_set_the_mode_and_the_level(console: Console) -> None:
    """Settings: the mode and the warning level saved for the session's agent (a level at the
    threshold refused with the server's sentence); the band follows the new level at once."""
    session_id = session_at(console, 0.55)
    agent = console.stack.store.get_session(session_id).agent_id
    page = console.open(session_id)
    expect(page.get_by_test_id("gate-band")).to_be_hidden()  # under 60%
    page.get_by_test_id("settings-toggle").click()
    expect(page.get_by_test_id("agent-auto-compact-effective")).to_have_text(
        re.compile(r"On: compact at the threshold .*COMPACTION_AUTO_COMPACT")
    )
    page.get_by_test_id("agent-auto-compact").select_option("ask")
    page.get_by_test_id("agent-warn-percent").fill("70")
    page.get_by_test_id("agent-save").click()
    expect(page.get_by_test_id("agent-save-status")).to_have_text(
        re.compile("must be below the threshold of 70%")
    )
    page.get_by_test_id("agent-warn-percent").fill("50")
    page.get_by_test_id("agent-save").click()
    expect(page.get_by_test_id("agent-save-status")).to_have_text("Saved")
    console.shot("settings")
    shown = console.stack.api.get(f"/api/agents/{agent}").json()
    assert (shown["autoCompact"], shown["warnPercent"]) == ("ask", 50)
    page.get_by_test_id("settings-toggle").click()
    expect(page.get_by_test_id("gate-band")).to_be_visible()  # 55% is past 50%


def test_the_band_in_chinese(console_zh: Console) -> None:
    page = console_zh.open(session_at(console_zh, 0.61))
    expect(page.get_by_test_id("gate-text")).to_have_text(
        re.compile(r"^将在 70% 时自动压缩 — 上下文已达 6\d(\.\d)?%。$")
    )
    expect(page.get_by_test_id("gate-focus")).to_have_text("带重点立即压缩…")
    expect(page.get_by_test_id("gate-not-now")).to_have_text("暂不")
    console_zh.shot("zh")
