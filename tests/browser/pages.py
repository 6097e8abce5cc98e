"""What the browser tests look for on the console's page (the ``data-testid`` hooks listed at
the top of ``gateway/static/app.js``) and the sessions they open."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from playwright.sync_api import Locator, Page

from tests.browser.conftest import Console, conversation

WINDOW = 12_000
SUMMARY = "[CONTEXT COMPACTION]"
DONE = re.compile(r"^Context compacted · [1-9]\d* messages removed · [1-9]\d*% tokens saved$")
#: the loop stage's (docs/architecture.md, "The job"): the current task's tool steps
LOOP_SUMMARY = "[LOOP COMPACTION]"
LOOP_DONE = re.compile(
    r"^Tool steps compacted · [1-9]\d* messages into an execution summary · [1-9]\d*% tokens saved$"
)


def bubbles(page: Page, state: str | None = None) -> Locator:
    found = page.get_by_test_id("compaction-bubble")
    return found.and_(page.locator(f"[data-state={state}]")) if state else found


def replies(page: Page) -> Locator:
    return page.get_by_test_id("message").and_(page.locator("[data-role=assistant]"))


def view_toggle(page: Page, session_id: str) -> Locator:
    """The full/compacted toggle of ``session_id`` in the session list."""
    item = page.locator(f"[data-testid=session-item][data-session-id='{session_id}']")
    return item.get_by_test_id("session-view-toggle")


def send(page: Page, text: str) -> None:
    """Typed in the input box, sent with Enter."""
    page.get_by_test_id("message-input").fill(text)
    page.get_by_test_id("message-input").press("Enter")


def session_at(
    console: Console,
    share: float,
    *,
    window: int = WINDOW,
    threshold: int | None = None,
    auxiliary_channel_id: int | None = None,
    session_id: str | None = None,
    extra: Sequence[dict[str, Any]] = (),
) -> str:
    """A session whose conversation fills ``share`` of its window (up to 2% more), with a
    middle to summarize, then ``extra`` messages (``Stack.session`` for the rest)."""
    return console.stack.session(
        [*conversation(int(window * share)), *extra],
        window=window,
        threshold=threshold,
        auxiliary_channel_id=auxiliary_channel_id,
        session_id=session_id,
    )


def two_stage_session(console: Console, *, window: int = 4_000) -> str:
    """A session that a compaction takes through both stages (docs/architecture.md, "The job"):
    a few long turns, then a request and a loop of 24 steps whose weight is the assistant's own
    reasoning, so that neither summarizing the history nor pruning tool output brings it under
    its threshold."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You help a team move its MySQL tables to PostgreSQL 16."}
    ]
    for turn in range(6):
        messages += [
            {"role": "user", "content": f"Turn {turn}: " + "how do we move orders? " * 25},
            {"role": "assistant", "content": f"Turn {turn}: " + "count, then compare. " * 25},
        ]
    messages.append({"role": "user", "content": "Fix the failing migration test, run the suite."})
    for step in range(24):
        command = json.dumps({"command": f"pytest tests/test_step{step}.py"})
        call = {
            "id": f"c{step}",
            "type": "function",
            "function": {"name": "bash", "arguments": command},
        }
        messages += [
            {
                "role": "assistant",
                "content": f"Step {step}: " + "reasoning about the schema. " * 25,
                "tool_calls": [call],
            },
            {"role": "tool", "tool_call_id": f"c{step}", "content": f"{step} passed"},
        ]
    return console.stack.session(messages, window=window)
