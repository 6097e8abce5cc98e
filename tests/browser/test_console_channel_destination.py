"""The console's channel form never sends a stored key to a new address (docs/architecture.md,
"Settings"; store/channels.py): editing a keyed channel's base URL without typing the key again
shows the server's refusal in the form and changes nothing; with the key typed, it saves."""

from __future__ import annotations

import uuid

from playwright.sync_api import expect

from tests.browser.conftest import Console
from tests.browser.pages import session_at
from tests.browser.test_console_settings import open_settings

KEY = "sk-browser-" + "destination-0123456789"
OLD_URL = "https://llm.example/v1"
NEW_URL = "https://elsewhere.example/v1"


def test_a_new_base_url_needs_the_key_again(console: Console) -> None:
    stack = console.stack
    name = f"keyed-{uuid.uuid4().hex[:6]}"
    channel = stack.store.add_channel(
        name, provider="openai-compatible", model="m", base_url=OLD_URL, api_key=KEY
    )
    page = console.open(session_at(console, 0.3))
    open_settings(page)
    item = page.locator(f"[data-testid=channel-item][data-name='{name}']")
    item.get_by_test_id("channel-edit").click()
    page.get_by_test_id("channel-base-url").fill(NEW_URL)
    page.get_by_test_id("channel-save").click()

    expect(page.get_by_test_id("channel-form-error")).to_contain_text("give the key again")
    stored = stack.store.get_channel(channel.id)
    assert stored.base_url == OLD_URL
    assert stored.api_key is not None and stored.api_key.get_secret_value() == KEY

    page.get_by_test_id("channel-api-key").fill("sk-browser-" + "other-0123456789")
    page.get_by_test_id("channel-save").click()
    expect(page.get_by_test_id("channel-form")).to_be_hidden()
    assert stack.store.get_channel(channel.id).base_url == NEW_URL
    stack.store.remove_channel(channel.id)
