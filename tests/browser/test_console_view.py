"""The console shows what happened, at once (issue 23): after a compaction the folded messages
leave the screen without a reload and the summary card stands for them (not drawn as the user's
bubble); an undo brings the originals back at once and the undone run offers no second undo,
before and after a reload; a run that only pruned says what it pruned; a collapsed tool result
shows its first line; an imported transcript is named after its file and can be renamed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, expect

from compaction.core.formats import to_openai
from tests.browser.conftest import Console
from tests.browser.pages import bubbles, send, session_at
from tests.fakes import conversation


def agent_loop(turns: int, tool_chars: int) -> list[dict[str, Any]]:
    """``tests.fakes.conversation`` as OpenAI messages: a tool call and its result a turn."""
    return to_openai(conversation(turns, tool_chars=tool_chars))


#: what a message row is on the page (a pending one is not stored yet)
ROWS = "[data-testid=message], [data-testid=summary-message]"


def display_rows(console: Console, session: str) -> list[dict[str, Any]]:
    """The display view's messages (its event rows are the bubbles)."""
    answer = console.stack.api.get(f"/api/sessions/{session}/history?view=display").json()
    return [r for r in answer["messages"] if (r["metadata"] or {}).get("systemType") is None]


def shown_ids(page: Page) -> list[int]:
    ids: list[int] = page.locator(ROWS).evaluate_all("ns => ns.map(n => Number(n.dataset.id))")
    return ids


def test_a_compaction_folds_the_view_at_once(console: Console) -> None:
    """No reload: once the done bubble comes, the list is the display view (the summary card
    where the compacted messages were), and the card is not the user's bubble."""
    session = session_at(console, 0.64)
    page = console.open(session)
    before = shown_ids(page)
    page.get_by_test_id("compact-button").click()
    expect(bubbles(page, "done")).to_have_count(1)
    run = console.stack.api.get(f"/api/sessions/{session}/runs").json()["runs"][-1]
    card = page.get_by_test_id("summary-message")
    expect(card).to_have_count(1)
    expected = [r["id"] for r in display_rows(console, session)]
    expect(page.locator(ROWS)).to_have_count(len(expected))
    assert shown_ids(page) == expected
    assert len(expected) == len(before) - run["removedCount"] + 1
    expect(page.locator("[data-compacted=true]")).to_have_count(0)

    expect(card).to_have_class(re.compile(r"\bmsg-summary\b"))
    expect(card).not_to_have_class(re.compile(r"\bmsg-user\b"))
    expect(card.locator(".role")).to_have_text("summary")
    label = f"Summary of {run['removedCount']} earlier messages"
    expect(card.get_by_test_id("summary-card-label")).to_have_text(label)
    look = card.evaluate(
        "n => [getComputedStyle(n).alignSelf, getComputedStyle(n).borderLeftWidth]"
    )
    assert look == ["stretch", "4px"]  # a card across the list, not a bubble on the right
    console.shot("folded")


def test_an_undo_shows_the_originals_at_once_and_no_second_undo(console: Console) -> None:
    session = session_at(console, 0.64)
    page = console.open(session)
    before = shown_ids(page)
    page.get_by_test_id("compact-button").click()
    done = bubbles(page, "done")
    expect(done).to_have_count(1)
    expect(page.get_by_test_id("summary-message")).to_have_count(1)
    done.get_by_test_id("bubble-undo").click()

    expect(bubbles(page, "restored")).to_have_count(1)
    expect(page.get_by_test_id("summary-message")).to_have_count(0)
    expect(page.locator(ROWS)).to_have_count(len(before))
    assert shown_ids(page) == before
    run = console.stack.api.get(f"/api/sessions/{session}/runs").json()["runs"][-1]
    assert run["status"] == "restored"
    expect(done.get_by_test_id("bubble-undo")).to_have_count(0)
    expect(done.get_by_test_id("bubble-undone")).to_have_text("undone")
    console.shot("undone")

    page.reload()
    expect(bubbles(page, "restored")).to_have_count(1)
    expect(bubbles(page, "done").get_by_test_id("bubble-undo")).to_have_count(0)
    expect(bubbles(page, "done").get_by_test_id("bubble-undone")).to_be_visible()
    assert shown_ids(page) == before


def test_a_run_that_only_pruned_says_what_it_pruned(console: Console) -> None:
    """Over the threshold with large old tool outputs: pruning them alone gets under, so the
    run removes no message and writes no summary; its bubble says what it pruned, never "0
    messages removed", in English and in Chinese."""
    session = console.stack.session(agent_loop(8, 1_400), window=4_000)
    page = console.open(session)
    send(page, "And the next directory?")  # the turn's check compacts first: automatic
    done = bubbles(page, "done")
    expect(done).to_have_count(1)
    run = console.stack.api.get(f"/api/sessions/{session}/runs").json()["runs"][-1]
    assert run["removedCount"] == 0 and run["prunedCount"] > 0, run
    said = re.compile(rf"^Pruned {run['prunedCount']} old tool outputs · \d+% tokens saved$")
    expect(done.get_by_test_id("bubble-text")).to_have_text(said)
    expect(done.get_by_test_id("bubble-view-summary")).to_have_count(0)
    expect(page.get_by_test_id("pruned-tag").first).to_be_visible()
    console.shot("pruned-only")
    page.get_by_test_id("lang-select").select_option("zh")
    zh = re.compile(rf"^已裁剪 {run['prunedCount']} 条旧的工具输出 · 节省 \d+% token$")
    expect(bubbles(page, "done").get_by_test_id("bubble-text")).to_have_text(zh)


def test_a_collapsed_tool_result_shows_its_first_line(console: Console) -> None:
    page = console.open(console.stack.session(agent_loop(3, 300), window=16_000))
    results = page.locator("[data-role=tool]")
    expect(results).to_have_count(3)
    first = results.first
    expect(first.locator("details")).not_to_have_attribute("open", "")
    expect(first.get_by_test_id("tool-first-line")).to_have_text("file_0.py")
    expect(first.get_by_test_id("tool-first-line")).to_be_visible()
    expect(first.locator(".tool-output")).to_be_hidden()
    first.locator("summary").click()
    expect(first.locator(".tool-output")).to_contain_text("x" * 300)
    console.shot("tool-first-line")


def test_an_imported_transcript_is_named_after_its_file_and_renamed(
    console: Console, tmp_path: Path
) -> None:
    page = console.open(session_at(console, 0.3))
    path = tmp_path / "orders migration.json"
    path.write_text(
        json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}])
    )
    page.get_by_test_id("import-file").set_input_files(str(path))
    current = page.locator("[data-testid=session-item].current")
    expect(current.get_by_test_id("session-name")).to_have_text("orders migration")
    session = current.get_attribute("data-session-id")
    assert session and session != "orders migration"
    listed = console.stack.api.get(f"/api/sessions/{session}").json()
    assert listed["title"] == "orders migration"

    current.get_by_test_id("session-rename").click()
    field = page.get_by_test_id("session-title-input")
    expect(field).to_be_focused()
    expect(field).to_have_value("orders migration")
    field.fill("订单表迁移")
    field.press("Enter")
    item = page.locator(f"[data-testid=session-item][data-session-id='{session}']")
    expect(item.get_by_test_id("session-name")).to_have_text("订单表迁移")
    expect(item.get_by_test_id("session-rename")).to_be_focused()  # focus back where it was
    assert console.stack.api.get(f"/api/sessions/{session}").json()["title"] == "订单表迁移"
    console.shot("renamed")

    item.get_by_test_id("session-rename").click()
    page.get_by_test_id("session-title-input").fill("not kept")
    page.get_by_test_id("session-title-input").press("Escape")  # cancels
    expect(item.get_by_test_id("session-name")).to_have_text("订单表迁移")
    item.get_by_test_id("session-rename").click()
    page.get_by_test_id("session-title-input").fill("")
    page.get_by_test_id("session-title-input").press("Enter")  # blank: the id names it
    expect(item.get_by_test_id("session-name")).to_have_text(session)
    assert console.stack.api.get(f"/api/sessions/{session}").json()["title"] is None
