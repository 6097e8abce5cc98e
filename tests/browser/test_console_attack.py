"""Another web page cannot drive the default gateway (docs/architecture.md, "The gateway"; the
red team's step 13): ``compaction gateway`` as a new user runs it, no token, and a page of
another origin on this machine (``http://localhost:OTHER``) that Chromium opens. The page
fires body-less POSTs (``/compact``, ``/runs/1/restore``), opens the session's WebSocket and
posts into it, and frames the console; the gateway refuses each, so the run is not restored,
no compaction is queued, no message is stored and the frame stays empty."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import Browser

from tests.browser.conftest import browser_page, screenshot
from tests.e2e.test_cli_gateway import gateway, new_user, wait_for_run

SESSION = "demo-en"
MARK = "posted by another web page"

ATTACK = """<!doctype html>
<title>a page on the web</title>
<h1>a page on the web</h1>
<iframe id="frame" width="900" height="500"></iframe>
<script>
const gateway = %(gateway)s;
const results = {posts: {}, socket: {opened: false, received: []}, framed: false};
async function attack() {
  for (const path of %(posts)s) {
    try {
      await fetch(gateway + path, {method: "POST", mode: "no-cors"});
      results.posts[path] = "sent";
    } catch (err) {
      results.posts[path] = String(err);
    }
  }
  await new Promise((resolve) => {
    const ws = new WebSocket(gateway.replace("http", "ws") + "/ws/sessions/" + %(session)s);
    ws.onopen = () => {
      results.socket.opened = true;
      ws.send(JSON.stringify({type: "message", content: %(mark)s}));
    };
    ws.onmessage = (message) => results.socket.received.push(message.data);
    ws.onclose = () => resolve();
    setTimeout(resolve, 5000);
  });
  const frame = document.getElementById("frame");
  await new Promise((resolve) => {
    frame.onload = resolve;
    frame.src = gateway + "/";
  });
  document.title = "done";
}
attack();
</script>
"""


@contextmanager
def attack_page(gateway_url: str) -> Iterator[str]:
    """The page, served by a server of its own on another port: another origin."""
    page = ATTACK % {
        "gateway": json.dumps(gateway_url),
        "posts": json.dumps([f"/api/sessions/{SESSION}/compact", "/api/runs/1/restore"]),
        "session": json.dumps(SESSION),
        "mark": json.dumps(MARK),
    }

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = page.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://localhost:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def test_a_page_of_another_origin_cannot_drive_the_gateway(
    browser: Browser, tmp_path: Path
) -> None:
    with (
        gateway(new_user(tmp_path / "home"), tmp_path) as (url, _process),
        httpx.Client(base_url=url, timeout=30) as api,
    ):
        assert api.post(f"/api/sessions/{SESSION}/compact", json={}).status_code == 202
        run = wait_for_run(api, SESSION)
        assert run["status"] == "succeeded" and run["id"] == 1
        history = api.get(f"/api/sessions/{SESSION}/history", params={"view": "full"})
        before = len(history.json()["messages"])

        with attack_page(url) as address, browser_page(browser, "console-attack") as page:
            page.goto(address)
            page.wait_for_function("document.title === 'done'")
            results = page.evaluate("results")
            frame = page.frame_locator("#frame")
            framed = frame.locator("[data-testid=message-input]").count()
            screenshot(page, "console-attack")
            time.sleep(2)  # a compaction the page queued would have run on the in-process worker

            runs = api.get(f"/api/sessions/{SESSION}/runs").json()["runs"]
            rows = api.get(f"/api/sessions/{SESSION}/history", params={"view": "full"})
            seen = {
                "runs": [(r["id"], r["status"]) for r in runs],
                "messages": len(rows.json()["messages"]),
                "socket": results["socket"],
                "framed": framed,  # the console's input box inside the page's frame
            }
            assert seen == {
                "runs": [(1, "succeeded")],  # none queued, none restored
                "messages": before,
                "socket": {"opened": False, "received": []},
                "framed": 0,
            }
