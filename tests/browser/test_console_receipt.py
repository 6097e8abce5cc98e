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

from tests.browser.conftest import Console, Stack, conversation
from tests.browser.pages import WINDOW, bubbles

#: an instruction in the compacted span: its path stays (the ledger), its words fold
RULE = "Never touch legacy/schema.sql while we migrate."
TABLES = ("orders", "customers", "invoices", "refunds")


def _loop() -> list[dict[str, Any]]:
    """The latest request and four tool steps after it: the kept tail, whose older outputs a
    compaction prunes (their paths are then in no summary: the receipt lists them)."""
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
    folded = receipt["userMessages"]["total"] - receipt["userMessages"]["verbatim"]
    reminder = (
        f"{folded} of your instructions were folded into the summary: constraints now live there."
    )
    # the bubble reminds the user at once, and after a reload (its row carries the counts)
    expect(done.get_by_test_id("bubble-folded")).to_have_text(reminder)
    page.reload()
    expect(done.get_by_test_id("bubble-folded")).to_have_text(reminder)
    missing = receipt["identifiers"]["missing"]["paths"]
    assert "/srv/dumps/orders_2024.sql" in missing  # pruned in the tail, in no summary

    done.get_by_test_id("bubble-view-summary").click()
    box = page.get_by_test_id("summary-receipt")
    expect(box).to_be_visible()
    ids = receipt["identifiers"]
    not_kept = ids["total"] - ids["kept"]
    expect(box.get_by_test_id("receipt-identifiers")).to_have_text(
        f"Kept {ids['kept']} of {ids['total']} exact identifiers · {not_kept} not kept:"
    )
    paths = box.locator("[data-testid=receipt-missing][data-kind=paths]")
    expect(paths.locator("code", has_text="/srv/dumps/orders_2024.sql")).to_be_visible()
    assert folded >= 1
    expect(box.get_by_test_id("receipt-folded")).to_have_text(reminder)
    expect(box.get_by_test_id("receipt-folded-list").locator("li", has_text=RULE)).to_be_visible()
    tokens = f"{run['inputTokens']:,} input tokens, {run['outputTokens']:,} output tokens"
    expect(box.get_by_test_id("receipt-aux")).to_have_text(f"Auxiliary model: {tokens}")
    assert run["cost"] == pytest.approx((run["inputTokens"] * 3 + run["outputTokens"] * 15) / 1e6)
    expect(box.get_by_test_id("receipt-cost")).to_have_text(
        re.compile(r"^Cost: \$\d+\.\d{2,4} this compaction · \$\d+\.\d{2,4} this session$")
    )
    expect(page.get_by_test_id("summary-content")).to_contain_text("Goal")
    console.shot("drawer-receipt")

    page.keyboard.press("Escape")
    page.get_by_test_id("lang-select").select_option("zh")
    bubbles(page, "done").get_by_test_id("bubble-view-summary").click()
    expect(box.get_by_test_id("receipt-folded")).to_have_text(
        f"你的 {folded} 条指令已并入摘要：这些约束现在保存在摘要里。"
    )
    expect(box.get_by_test_id("receipt-identifiers")).to_contain_text(
        f"保留了 {ids['total']} 个精确标识符中的 {ids['kept']} 个"
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
