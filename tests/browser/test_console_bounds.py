"""A compaction whose result is not smaller than what it would replace (docs/algorithm.md,
"Bounds"): the console's "compacting…" bubble ends in a "not applied" bubble, live and after a
reload, in both languages, and the history is what it was."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.conftest import Console
from tests.browser.pages import bubbles, session_at
from tests.llm_server import FakeLLM, Reply

#: ~3,000 tokens: under twice the 2,000-token summary budget, over the whole small session
LONG_SUMMARY = "## Goal\n" + "Keep every detail of the session verbatim. " * 270
EN = "Not applied: the result was not smaller; the history is unchanged"
ZH = "压缩结果并不比原内容小，未应用，历史保持不变"


def test_a_result_not_smaller_ends_in_a_not_applied_bubble(console: Console, aux: FakeLLM) -> None:
    stack = console.stack
    aux.script(Reply(text=LONG_SUMMARY))
    session = session_at(console, 0.1)
    before = [(s.message.role, s.message.content) for s in stack.store.load_history(session)]
    page = console.open(session)
    page.get_by_test_id("compact-button").click()

    skipped = bubbles(page, "skipped")
    expect(skipped.get_by_test_id("bubble-text")).to_have_text(EN)
    expect(bubbles(page, "start")).to_have_count(0)
    expect(bubbles(page, "done")).to_have_count(0)
    run = stack.api.get(f"/api/sessions/{session}/runs").json()["runs"][-1]
    assert (run["status"], run["code"]) == ("skipped", "not_smaller")
    after = [(s.message.role, s.message.content) for s in stack.store.load_history(session)]
    assert after == before

    page.reload()  # the skipped row closes its start row
    expect(skipped.get_by_test_id("bubble-text")).to_have_text(EN)
    expect(bubbles(page, "start")).to_have_count(0)
    page.get_by_test_id("lang-select").select_option("zh")
    expect(skipped.get_by_test_id("bubble-text")).to_have_text(ZH)
    console.shot("not-smaller")
