"""Codes, not sentences, cross the wire (docs/architecture.md, "Tables", event rows; "Error
codes"): the console words a compaction's bubbles itself, in its own language, from the event's
or the row's code and figures. The server's one line is only a failure's detail, and a failure
whose fix is a setting points at the console's Settings, never at a command line."""

from __future__ import annotations

import re
import uuid

from playwright.sync_api import expect

from tests.browser.conftest import Console
from tests.browser.pages import bubbles, session_at

#: what the rows hold as their content: never what the console shows
FALLBACK = "fallback sentence for exports"


def test_the_chinese_console_points_a_missing_auxiliary_model_at_its_settings(
    console_zh: Console,
) -> None:
    stack = console_zh.stack
    variable = f"BROWSER_MISSING_{uuid.uuid4().hex[:8].upper()}_API_KEY"  # set nowhere
    channel = stack.store.add_channel(
        f"keyless-{uuid.uuid4().hex[:6]}",
        provider="openai-compatible",
        model="gpt-4o-mini",
        base_url=stack.aux.url_for("openai-compatible"),
        api_key_env=variable,
        auxiliary=True,
    )
    session = session_at(console_zh, 0.5, auxiliary_channel_id=channel.id)
    page = console_zh.open(session)
    page.get_by_test_id("compact-button").click()

    failed = bubbles(page, "failed")
    reason = re.compile(r"^压缩失败：没有可用的辅助模型。请在「设置」中")
    expect(failed.get_by_test_id("bubble-text")).to_have_text(reason)
    expect(failed.get_by_test_id("bubble-detail")).to_contain_text(variable)  # the server's
    expect(failed.get_by_test_id("bubble-new-chat")).to_have_text("开新对话")
    expect(failed).not_to_contain_text("compaction channel")
    run = stack.api.get(f"/api/sessions/{session}/runs").json()["runs"][-1]
    assert (run["status"], run["code"]) == ("failed", "no_auxiliary_model")
    console_zh.shot("failed")

    page.reload()  # the row's code, rendered again in Chinese
    expect(failed.get_by_test_id("bubble-text")).to_have_text(reason)
    expect(failed).not_to_contain_text("Compaction failed")
    expect(page.get_by_test_id("settings-panel")).to_be_hidden()
    failed.get_by_test_id("bubble-open-settings").click()
    expect(page.get_by_test_id("settings-panel")).to_be_visible()
    expect(page.get_by_test_id("agent-aux-select")).to_be_visible()


def test_started_and_done_bubbles_come_from_the_rows_metadata_in_both_languages(
    console: Console,
) -> None:
    stack = console.stack
    session = session_at(console, 0.3)
    done = {"requestId": "r-done", "stage": "history", "removedCount": 5}
    stack.store.append_event(
        session, "done", FALLBACK, {**done, "tokensBefore": 1_000, "tokensAfter": 250}
    )
    stack.store.append_event(
        session, "start", FALLBACK, {"requestId": "r-open", "reason": "auto", "stage": "loop"}
    )
    page = console.open(session)
    done_text = bubbles(page, "done").get_by_test_id("bubble-text")
    start_text = bubbles(page, "start").get_by_test_id("bubble-text")

    expect(done_text).to_have_text("Context compacted · 5 messages removed · 75% tokens saved")
    expect(start_text).to_have_text("Compacting the task's tool steps…")
    page.get_by_test_id("lang-select").select_option("zh")
    expect(done_text).to_have_text("上下文已压缩 · 移除 5 条消息 · 节省 75% token")
    expect(start_text).to_have_text("正在压缩当前任务的工具步骤...")
    expect(page.get_by_test_id("message-list")).not_to_contain_text(FALLBACK)
    console.shot("zh")
