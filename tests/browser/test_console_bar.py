"""The context bar above the input (seed §8.1), in Chinese: green up to the threshold, orange
to 90%, red with a pulse above; the 1px threshold tick at the agent's threshold with its hover
text; the status line with its figures and the token breakdown on hover.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Console
from tests.browser.pages import session_at

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
