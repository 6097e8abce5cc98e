"""The context bar above the input (seed §8.1), in Chinese: green up to the threshold, orange
to 90%, red with a pulse above; the 1px threshold tick at the agent's threshold with its hover
text; the status line with its figures and the token breakdown on hover. A fixed token budget
moves the tick to its share of the window and names itself on the status line.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Console
from tests.browser.pages import WINDOW, session_at
from tests.browser.test_console_settings import agent_of

GREEN, ORANGE, RED = "rgb(103, 194, 58)", "rgb(230, 162, 60)", "rgb(245, 108, 108)"


@pytest.mark.parametrize(
    ("share", "threshold", "band", "colour"),
    [
        (0.35, None, "green", GREEN),
        (0.78, None, "orange", ORANGE),
        (0.94, None, "red", RED),
        (0.55, 50, "orange", ORANGE),
    ],
)
def test_colour_bands_and_the_threshold_tick(
    console_zh: Console, share: float, threshold: int | None, band: str, colour: str
) -> None:
    page = console_zh.open(session_at(console_zh, share, threshold=threshold))
    bar = page.get_by_test_id("context-bar")
    expect(bar).to_have_attribute("data-band", band)
    fill = page.get_by_test_id("context-bar-fill")
    expect(fill).to_have_css("background-color", colour)
    expect(fill).to_have_css("animation-name", "pulse" if band == "red" else "none")
    expect(bar).to_have_css("height", "3px")
    shown = threshold or 70
    tick = page.get_by_test_id("threshold-tick")
    expect(tick).to_have_attribute("title", f"自动压缩阈值 {shown}%")
    assert tick.evaluate("t => t.style.left") == f"{shown}%"
    tick.hover()
    hover = tick.evaluate("t => getComputedStyle(t, '::before').content")
    assert hover == f'"自动压缩阈值 {shown}%"'
    expect(page.get_by_test_id("status-text")).to_have_text(
        re.compile(rf"^[\d,]+/12,000 tokens · 阈值 {shown}% · 已压缩 0 次$")
    )
    page.get_by_test_id("status-text").hover()
    breakdown = page.get_by_test_id("status-breakdown")
    expect(breakdown).to_be_visible()
    expect(breakdown).to_contain_text(re.compile(r"输入（用户）: [\d,]+"))
    expect(breakdown).to_contain_text(re.compile(r"输出（助手）: [\d,]+"))
    expect(breakdown).to_contain_text(re.compile(r"当前状态: [\d,]+"))
    console_zh.shot(band)


def test_a_token_budget_sets_the_tick_and_the_status_line(console: Console) -> None:
    """A 5,000-token budget on a 12,000-token window: the tick at 41.7% (not the unused 70%),
    orange past it at half the window, and the status line names the budget (both languages)."""
    stack = console.stack
    session = session_at(console, 0.5)
    budget = 5_000
    saved = stack.api.put(f"/api/agents/{agent_of(stack, session)}", json={"tokenBudget": budget})
    assert saved.status_code == 200, saved.text
    page = console.open(session)
    share = round(100 * budget / WINDOW, 1)
    bar = page.get_by_test_id("context-bar")
    expect(bar).to_have_attribute("data-threshold", str(share))
    expect(bar).to_have_attribute("data-band", "orange")
    tick = page.get_by_test_id("threshold-tick")
    assert tick.evaluate("t => t.style.left") == f"{share}%"
    drawn = page.evaluate(
        """() => {
          const bar = document.querySelector('[data-testid=context-bar]').getBoundingClientRect();
          const tick = document.querySelector('[data-testid=threshold-tick]');
          const mark = tick.getBoundingClientRect();  // centred on its place
          return (100 * (mark.left + mark.width / 2 - bar.left)) / bar.width;
        }"""
    )
    assert abs(drawn - share) < 0.5
    expect(tick).to_have_attribute("title", "Auto-compaction at 5,000 tokens (token budget)")
    status = page.get_by_test_id("status-text")
    expect(status).to_have_text(
        re.compile(r"^[\d,]+/12,000 tokens · budget 5,000 tokens · compacted 0 times$")
    )
    console.shot("budget")
    page.get_by_test_id("lang-select").select_option("zh")
    expect(status).to_have_text(
        re.compile(r"^[\d,]+/12,000 tokens · 预算 5,000 tokens · 已压缩 0 次$")
    )
    expect(tick).to_have_attribute("title", "自动压缩阈值 5,000 tokens（Token 预算）")
