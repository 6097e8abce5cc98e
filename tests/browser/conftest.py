"""Fixtures of the console's browser tests (docs/architecture.md, "Tests"): real processes, a
real browser.

One stack serves the whole browser suite: ``compaction gateway`` (a bearer token, a PostgreSQL
database of its own, the run's Redis names) and ``compaction worker`` as processes, two
loopback fake LLMs (``tests/llm_server.py``: the auxiliary channel's for summaries, the chat
channel's for replies), and Debian's Chromium driven by Playwright, headless, nothing
downloaded. Each test makes its own sessions (``Stack.session``) and gets a fresh browser
context (``console``) that already holds the token; its screenshots go to ``ARTIFACTS``.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from compaction import estimate_messages_tokens
from compaction.core.formats import from_openai
from compaction.store import ChannelConfig, Store, make_sessionmaker
from compaction.store.migrate import upgrade
from tests.llm_server import FakeLLM, Reply, serve
from tests.processes import COMPACTION, child_env, start, stop
from tests.services import create_database, drop_database, fresh_namespace

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
#: ``COMPACTION_UPDATE_SCREENSHOT=1 pytest tests/browser`` also copies the console mid-conversation
#: to the README's picture
README_PICTURE = Path(__file__).resolve().parents[2] / "docs" / "console.png"
CHAT_MODEL = "fake-chat"
#: what the chat model answers (the auxiliary one answers with the fake server's summary)
REPLY = "Noted: after the counts agree, we switch the reads, then the writes."
AUX_KEY = "sk-browser-aux-0123456789abcdef"
CHAT_KEY = "sk-browser-chat-0123456789abcdef"
#: generous: a process under a loaded CI machine; every wait ends as soon as it can
WAIT_MS = 20_000
expect.set_options(timeout=WAIT_MS)


@dataclass
class Stack:
    url: str
    token: str
    store: Store
    #: the auxiliary channel's server (summaries) and the chat channel's (replies)
    aux: FakeLLM
    chat: FakeLLM
    aux_channel: ChannelConfig
    api: httpx.Client

    def session(
        self,
        messages: Sequence[dict[str, Any]],
        *,
        window: int,
        threshold: int | None = None,
        auxiliary_channel_id: int | None = None,
        session_id: str | None = None,
    ) -> str:
        """A new session holding ``messages``, of an agent of its own with a ``window``-token
        context (``threshold``, else the system's 70%; ``auxiliary_channel_id``, else the
        default auxiliary channel)."""
        agent = f"agent-{uuid.uuid4().hex[:8]}"
        self.store.set_agent(
            agent,
            context_window=window,
            threshold_percent=threshold,
            auxiliary_channel_id=auxiliary_channel_id,
        )
        return self.store.create_session(session_id, agent_id=agent, messages=messages)


TABLES = ("orders", "customers", "invoices", "shipments", "refunds", "products", "suppliers")


def conversation(tokens: int) -> list[dict[str, Any]]:
    """A plain conversation (no tool output to prune, so compacting it means summarizing it)
    of at least ``tokens`` estimated tokens, each turn about 250 more."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You help a team move its MySQL tables to PostgreSQL 16."}
    ]
    turn = 0
    while estimate_messages_tokens(from_openai(messages)) < tokens:
        table = TABLES[turn % len(TABLES)]
        messages.append(
            {"role": "user", "content": f"Next, the {table} table (batch {turn + 1}): what first?"}
        )
        messages.append(
            {
                "role": "assistant",
                "content": (
                    f"For **{table}**, batch {turn + 1}:\n\n1. Count the rows on both sides.\n"
                    "2. Compare a checksum of every 10,000 rows.\n3. Check the foreign keys "
                    f"that point at it.\n\n```sql\nSELECT count(*) FROM {table};\n```\n\n"
                    "Copy it during the quiet hours, keep the old table read-only until the "
                    "counts agree, and note the sequences to move past the highest id. "
                    "Then switch the application's reads, then its writes, one service at a "
                    "time, watching the error rate after each step."
                ),
            }
        )
        turn += 1
    return messages


def _console_address(log: Path, process: subprocess.Popen[bytes]) -> str:
    """The address ``compaction gateway`` prints once it listens."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = re.search(r"^console: (http://\S+)/$", log.read_text(), re.MULTILINE)
        if found:
            return found.group(1)
        if process.poll() is not None:
            break
        time.sleep(0.05)
    pytest.fail(f"compaction gateway did not start:\n{log.read_text()[-3000:]}", pytrace=False)


@pytest.fixture(scope="package")
def chat_llm() -> Iterator[FakeLLM]:
    with serve() as fake:
        yield fake


@pytest.fixture(scope="package")
def stack(
    llm_server: FakeLLM, chat_llm: FakeLLM, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    logs = tmp_path_factory.mktemp("browser-stack")
    name, database = create_database()
    token = secrets.token_urlsafe(24)
    try:
        upgrade(database)
        store = Store(make_sessionmaker(database))
        aux_channel = llm_server.add_channel(store, "aux-fake", api_key=AUX_KEY)
        store.add_channel(
            "chat-fake",
            provider="openai-compatible",
            model=CHAT_MODEL,
            base_url=chat_llm.url_for("openai-compatible"),
            api_key=CHAT_KEY,
        )
        with fresh_namespace() as names:
            env = child_env(
                **names.env(),
                COMPACTION_DATABASE_URL=database,
                COMPACTION_GATEWAY_TOKEN=token,
                COMPACTION_LLM_TIMEOUT_S="10",
                COMPACTION_LLM_MAX_RETRIES="0",
                COMPACTION_CHANNEL_CACHE_S="0",  # a channel a test edits applies at once
                COMPACTION_CHAT_CHANNEL="chat-fake",  # sessions of no agent chat with it
            )
            worker = start([str(COMPACTION), "worker"], env, logs / "worker.log")
            gateway = start([str(COMPACTION), "gateway", "--port", "0"], env, logs / "gateway.log")
            try:
                url = _console_address(logs / "gateway.log", gateway)
                headers = {"Authorization": f"Bearer {token}"}
                with httpx.Client(base_url=url, headers=headers, timeout=30) as api:
                    yield Stack(url, token, store, llm_server, chat_llm, aux_channel, api)
            finally:
                with ThreadPoolExecutor() as stopping:  # each takes seconds to exit
                    list(stopping.map(lambda p: stop(p, timeout=20), (gateway, worker)))
    finally:
        drop_database(name)


@pytest.fixture
def aux(stack: Stack) -> FakeLLM:
    """The auxiliary model for one test: every request answered with the default summary until
    the test scripts other replies."""
    stack.aux.script(Reply())
    return stack.aux


@pytest.fixture
def chat(stack: Stack) -> FakeLLM:
    stack.chat.script(Reply(text=REPLY))
    return stack.chat


# Package-scoped (tests/browser is a package): Playwright's sync API keeps an event loop
# running on the main thread while it is started, so it ends with the browser tests, before
# the tests that run asyncio.
@pytest.fixture(scope="package")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: apt-get install chromium (Debian's package; .ci/run does)",
            pytrace=False,
        )
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=["--no-sandbox"], headless=True
        )
        yield browser
        browser.close()


@dataclass
class Console:
    page: Page
    stack: Stack
    #: the test's name, the start of its screenshots' names
    name: str

    def open(self, session_id: str) -> Page:
        """The console on ``session_id``, once its socket is open and its figures shown."""
        self.page.goto(f"{self.stack.url}/#session={session_id}")
        self.page.locator("[data-testid=connection-status][data-state=open]").wait_for()
        self.page.locator("[data-testid=context-bar]:not([data-band=none])").wait_for()
        return self.page

    def shot(self, label: str) -> Path:
        return screenshot(self.page, f"{self.name}-{label}")


def screenshot(page: Page, name: str) -> Path:
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def settle(page: Page) -> None:
    """Until the bar's fill has grown or shrunk to its figure (a 0.4 s transition)."""
    page.wait_for_function(
        """() => {
          const bar = document.querySelector('[data-testid=context-bar]');
          const fill = bar.querySelector('.fill').getBoundingClientRect().width;
          const shown = (100 * fill) / bar.getBoundingClientRect().width;
          return Math.abs(shown - Math.min(100, Number(bar.dataset.percent))) < 0.5;
        }"""
    )


@contextmanager
def browser_page(
    browser: Browser, name: str, *, locale: str = "en-US", token: str | None = None
) -> Iterator[Page]:
    """A page in a browser context of its own (no storage shared with other tests), holding
    ``token`` as the console keeps it; an uncaught error of the page's scripts fails the test.
    Its last look is saved as ``<name>-last.png``."""
    context = browser.new_context(locale=locale, viewport={"width": 1280, "height": 860})
    context.set_default_timeout(WAIT_MS)
    if token is not None:
        context.add_init_script(f"localStorage.setItem('compaction.token', {json.dumps(token)})")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    try:
        yield page
        assert errors == [], "the console's scripts failed"
    finally:
        if not page.is_closed():
            screenshot(page, f"{name}-last")
        context.close()


@pytest.fixture
def console(
    browser: Browser, stack: Stack, aux: FakeLLM, chat: FakeLLM, request: pytest.FixtureRequest
) -> Iterator[Console]:
    with browser_page(browser, request.node.name, token=stack.token) as page:
        yield Console(page, stack, request.node.name)


@pytest.fixture
def console_zh(
    browser: Browser, stack: Stack, aux: FakeLLM, chat: FakeLLM, request: pytest.FixtureRequest
) -> Iterator[Console]:
    name = request.node.name
    with browser_page(browser, name, locale="zh-CN", token=stack.token) as page:
        yield Console(page, stack, name)


def keep_for_readme(path: Path) -> None:
    """The README's picture, when asked for (it is checked in; a run does not change it)."""
    if os.environ.get("COMPACTION_UPDATE_SCREENSHOT") == "1":
        shutil.copyfile(path, README_PICTURE)
