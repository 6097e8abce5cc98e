"""The receipt in the console (docs/architecture.md, "Receipt"): the compaction's drawer says how
many exact identifiers of the compacted span the result kept and lists those it did not, reminds
the user that their instructions folded into the summary now live there (en and zh), and shows
the auxiliary model's tokens and the cost of the run and of the session at the channel's
prices."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect
from sqlalchemy import text

from tests.browser.conftest import Console, Stack, conversation
from tests.browser.pages import WINDOW, bubbles

#: an instruction in the compacted span: its path stays (the ledger), its words too (the
#: user-words section)
RULE = "Never touch legacy/schema.sql while we migrate."
TABLES = ("orders", "customers", "invoices", "refunds")


def _loop() -> list[dict[str, Any]]:
    """The latest request and four tool steps after it: the kept tail, whose older outputs a
    compaction prunes (their paths then live in the ledger)."""
    steps: list[dict[str, Any]] = [
        {"role": "user", "content": "Now read the four pgloader logs: which tables failed?"}
    ]
    for i, table in enumerate(TABLES):
        arguments = json.dumps({"command": f"cat logs/{table}.log"})
        call = {
            "id": f"c{i}",
            "type": "function",
            "function": {"name": "bash", "arguments": arguments},
        }
        steps.append({"role": "assistant", "content": "", "tool_calls": [call]})
        output = (
            f"loaded rows from /srv/dumps/{table}_2024.sql\n" + "row ok, checksum matches\n" * 250
        )
        steps.append({"role": "tool", "tool_call_id": f"c{i}", "content": output})
    steps.append({"role": "assistant", "content": "None of them failed."})
    return steps


def _session(stack: Stack) -> str:
    base = conversation(int(WINDOW * 0.45))
    rule = [{"role": "user", "content": RULE}, {"role": "assistant", "content": "Understood."}]
    # after the first turn: the protected head keeps the first request verbatim
    return stack.session([*base[:3], *rule, *base[3:], *_loop()], window=WINDOW)


@pytest.fixture
def priced(stack: Stack) -> Iterator[None]:
    """The auxiliary channel priced for one test (the stack is shared: unpriced after it)."""
    stack.store.edit_channel(stack.aux_channel.id, price_input=3.0, price_output=15.0)
    yield
    stack.store.edit_channel(stack.aux_channel.id, clear_prices=True)


def test_the_drawer_shows_the_receipt(console: Console, priced: None) -> None:
    session = _session(console.stack)
    page = console.open(session)
    page.get_by_test_id("compact-button").click()
    done = bubbles(page, "done")
    expect(done).to_have_count(1)
    [run] = console.stack.api.get(f"/api/sessions/{session}/runs").json()["runs"]
    receipt = run["receipt"]
    ids, users = receipt["identifiers"], receipt["userMessages"]
    # the ledger lists the pruned outputs' paths and the user-words section quotes the rule
    # (docs/algorithm.md): this compaction lost nothing, and the console says so
    assert (ids["kept"], users["verbatim"]) == (ids["total"], users["total"])
    assert ids["total"] >= len(TABLES) and users["total"] >= 1
    expect(done.get_by_test_id("bubble-folded")).to_have_count(0)
    done.get_by_test_id("bubble-view-summary").click()
    box = page.get_by_test_id("summary-receipt")
    expect(box.get_by_test_id("receipt-identifiers")).to_have_text(
        f"Kept {ids['kept']} of {ids['total']} exact identifiers"
    )
    expect(box.get_by_test_id("receipt-missing")).to_have_count(0)
    expect(box.get_by_test_id("receipt-folded")).to_have_count(0)
    tokens = f"{run['inputTokens']:,} input tokens, {run['outputTokens']:,} output tokens"
    expect(box.get_by_test_id("receipt-aux")).to_have_text(f"Auxiliary model: {tokens}")
    assert run["cost"] == pytest.approx((run["inputTokens"] * 3 + run["outputTokens"] * 15) / 1e6)
    expect(box.get_by_test_id("receipt-cost")).to_have_text(
        re.compile(r"^Cost: \$\d+\.\d{2,4} this compaction · \$\d+\.\d{2,4} this session$")
    )
    expect(page.get_by_test_id("summary-content")).to_contain_text("Goal")
    console.shot("drawer-receipt")


def test_the_drawer_lists_what_a_run_lost(console: Console) -> None:
    """A run whose receipt records losses (a ledger over its budget, user words over theirs:
    written here into the run's record, as a larger session would): the drawer lists them."""
    session = _session(console.stack)
    page = console.open(session)
    page.get_by_test_id("compact-button").click()
    expect(bubbles(page, "done")).to_have_count(1)
    [run] = console.stack.api.get(f"/api/sessions/{session}/runs").json()["runs"]
    lost = {
        "identifiers": {
            "kept": 5,
            "total": 7,
            "totals": {"paths": 7},
            "missingCounts": {"paths": 2},
            "missing": {"paths": ["/srv/dumps/orders_2024.sql", "/srv/dumps/refunds_2024.sql"]},
        },
        "userMessages": {"verbatim": 1, "total": 2, "folded": [RULE]},
    }
    with console.stack.store.factory.begin() as db:
        db.execute(
            text("UPDATE compaction_run SET receipt = :r WHERE id = :id"),
            {"r": json.dumps(lost), "id": run["id"]},
        )
    page.reload()
    bubbles(page, "done").get_by_test_id("bubble-view-summary").click()
    box = page.get_by_test_id("summary-receipt")
    expect(box.get_by_test_id("receipt-identifiers")).to_have_text(
        "Kept 5 of 7 exact identifiers · 2 not kept:"
    )
    paths = box.locator("[data-testid=receipt-missing][data-kind=paths]")
    expect(paths.locator("code", has_text="/srv/dumps/orders_2024.sql")).to_be_visible()
    reminder = "1 of your instructions were folded into the summary: constraints now live there."
    expect(box.get_by_test_id("receipt-folded")).to_have_text(reminder)
    expect(box.get_by_test_id("receipt-folded-list").locator("li", has_text=RULE)).to_be_visible()
    console.shot("drawer-receipt-lost")

    page.keyboard.press("Escape")
    page.get_by_test_id("lang-select").select_option("zh")
    bubbles(page, "done").get_by_test_id("bubble-view-summary").click()
    expect(box.get_by_test_id("receipt-folded")).to_have_text(
        "你的 1 条指令已并入摘要：这些约束现在保存在摘要里。"
    )
    expect(box.get_by_test_id("receipt-identifiers")).to_contain_text(
        "保留了 7 个精确标识符中的 5 个"
    )
    console.shot("drawer-receipt-zh")


def test_an_unpriced_channel_says_so(console: Console) -> None:
    page = console.open(_session(console.stack))
    page.get_by_test_id("compact-button").click()
    bubbles(page, "done").get_by_test_id("bubble-view-summary").click()
    box = page.get_by_test_id("summary-receipt")
    expect(box.get_by_test_id("receipt-cost")).to_have_text("Cost: the channel has no price set")
    expect(box.get_by_test_id("receipt-aux")).to_contain_text("Auxiliary model: ")


def test_the_channel_form_sets_and_clears_prices(console: Console) -> None:
    stack = console.stack
    name = f"priced-{uuid.uuid4().hex[:6]}"
    page = console.open(_session(stack))
    page.get_by_test_id("settings-toggle").click()
    page.get_by_test_id("channel-add").click()
    page.get_by_test_id("channel-name").fill(name)
    page.get_by_test_id("channel-provider").select_option("openai")
    page.get_by_test_id("channel-model").fill("gpt-4o-mini")
    page.get_by_test_id("channel-auxiliary").check()
    page.get_by_test_id("channel-price-input").fill("0.15")
    page.get_by_test_id("channel-price-output").fill("0.6")
    page.get_by_test_id("channel-save").click()
    item = page.locator(f"[data-testid=channel-item][data-name='{name}']")
    expect(item).to_contain_text("$0.15 in / $0.6 out per Mtok")
    channel_id = int(item.get_attribute("data-channel-id") or 0)
    stored = stack.store.get_channel(channel_id)
    assert (stored.price_input_per_mtok, stored.price_output_per_mtok) == (0.15, 0.6)
    console.shot("channel-prices")

    item.get_by_test_id("channel-edit").click()
    expect(page.get_by_test_id("channel-price-input")).to_have_value("0.15")
    page.get_by_test_id("channel-price-input").fill("")
    page.get_by_test_id("channel-price-output").fill("")
    page.get_by_test_id("channel-save").click()
    expect(item).not_to_contain_text("per Mtok")
    stored = stack.store.get_channel(channel_id)
    assert (stored.price_input_per_mtok, stored.price_output_per_mtok) == (None, None)
    stack.store.remove_channel(channel_id, force=True)
