"""The console when a compaction fails (seed §11): a failing or unreachable auxiliary channel
gives the failure bubble, the history is left as it was, the bubble is still there after a
reload, the conversation goes on, and "start a new one" opens a new session of the same agent.
"""

from __future__ import annotations

import re
import uuid

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import REPLY, Console
from tests.browser.pages import bubbles, replies, send, session_at
from tests.llm_server import FakeLLM, Reply
from tests.services import free_port

FAILED = re.compile(r"^Compaction failed: \S.*")
DEAD_KEY = "sk-dead-channel-0123456789abcdef"


def failing_session(console: Console, why: str) -> str:
    """A session whose auxiliary model answers 500 (``failing``), or whose agent's auxiliary
    channel points at a port nothing listens on (``unreachable``)."""
    stack = console.stack
    if why == "failing":
        stack.aux.script(Reply(status=500, error="upstream overloaded"))
        return session_at(console, 0.5)
    channel = stack.store.add_channel(
        f"dead-{uuid.uuid4().hex[:6]}",
        provider="openai-compatible",
        model="gpt-4o-mini",
        base_url=f"http://127.0.0.1:{free_port()}/v1",
        api_key=DEAD_KEY,
        auxiliary=True,
    )
    return session_at(console, 0.5, auxiliary_channel_id=channel.id)


@pytest.mark.parametrize("why", ["failing", "unreachable"])
def test_a_failed_compaction_gives_the_failure_bubble(console: Console, why: str) -> None:
    stack = console.stack
    session = failing_session(console, why)
    before = stack.api.get(f"/api/sessions/{session}/history").json()["messages"]
    page = console.open(session)
    page.get_by_test_id("compact-button").click()

    failed = bubbles(page, "failed")
    expect(failed.get_by_test_id("bubble-text")).to_have_text(FAILED)
    expect(failed).to_contain_text("You can continue this conversation or start a new one")
    expect(page.get_by_test_id("status-text")).to_contain_text("compacted 0 times")
    run = stack.api.get(f"/api/sessions/{session}/runs").json()["runs"][-1]
    assert run["status"] == "failed"
    assert stack.api.get(f"/api/sessions/{session}/history").json()["messages"] == before
    assert DEAD_KEY not in page.content()
    console.shot(why)

    page.reload()
    expect(failed.get_by_test_id("bubble-text")).to_have_text(FAILED)

    send(page, "Let us go on without compacting.")  # the original conversation goes on
    expect(replies(page).last).to_contain_text(REPLY)

    agent = stack.api.get(f"/api/sessions/{session}").json()["agentId"]
    failed.get_by_test_id("bubble-new-chat").click()
    expect(page).not_to_have_url(re.compile(f"session={session}$"))
    current = page.locator("[data-testid=session-item].current")
    opened = current.get_attribute("data-session-id")
    assert opened and opened != session
    assert stack.api.get(f"/api/sessions/{opened}").json()["agentId"] == agent


def test_a_message_sent_while_a_turn_runs_is_refused_busy_on_its_own_bubble(
    console: Console, chat: FakeLLM
) -> None:
    """One turn per session at a time (docs/architecture.md, "The gateway"): a message sent
    while the model answers the previous one is refused with ``busy``, shown on that message
    (not on the one still waiting for its reply), which still gets its answer."""
    chat.script(Reply(text=REPLY, delay_s=2.0))
    session = session_at(console, 0.2)
    page = console.open(session)

    send(page, "First question: which table first?")
    send(page, "Second question, sent at once.")

    refused = page.locator("[data-pending=failed]")
    expect(refused).to_have_count(1)
    expect(refused).to_contain_text("Second question, sent at once.")
    expect(refused).to_contain_text("a turn of this session is still running")
    expect(replies(page).last).to_contain_text(REPLY)
    console.shot("busy")
    stored = console.stack.api.get(f"/api/sessions/{session}/history").json()["messages"]
    assert [m["content"] for m in stored[-2:]] == ["First question: which table first?", REPLY]
