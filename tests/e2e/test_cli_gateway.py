"""``compaction gateway`` as a user runs it (the installed console script, a process of its own):
the loopback-only rule without a token, the embedded mode a new user gets with nothing
configured (a fresh HOME, no ``COMPACTION_`` variable, no ``.env``), and the stateless mode
with services configured (docs/architecture.md, "The gateway").
"""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect

from compaction.cli.gateway import check_host
from compaction.service.queue import compaction_queue
from compaction.service.settings import Settings
from compaction.store.migrate import upgrade
from tests.e2e.test_cli import in_process
from tests.processes import COMPACTION, child_env, stop
from tests.services import RedisNamespace, create_database, drop_database

CONSOLE = re.compile(r"^console: (http://127\.0\.0\.1:\d+)/$", re.MULTILINE)


def new_user(home: Path, **settings: str) -> dict[str, str]:
    """A user's environment: nothing of ours configured, a HOME of their own."""
    return child_env(HOME=str(home), XDG_DATA_HOME=str(home / "data"), **settings)


@contextmanager
def gateway(
    env: dict[str, str], folder: Path, *args: str
) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``compaction gateway --port 0 ARGS`` run from ``folder``; the address it printed."""
    process = subprocess.Popen(
        [str(COMPACTION), "gateway", "--port", "0", *args],
        cwd=folder,  # no .env of the repository's
        env=env,
        stdout=(folder / "out.txt").open("w"),
        stderr=(folder / "err.txt").open("w"),
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (found := CONSOLE.search((folder / "out.txt").read_text())):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"no console address: {(folder / 'err.txt').read_text()[-2000:]}")
            time.sleep(0.05)
        yield found.group(1), process
    finally:
        stop(process, timeout=20)


def refused(env: dict[str, str], folder: Path, host: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(COMPACTION), "gateway", "--host", host, "--port", "0"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_refuses_a_public_host_without_a_token(tmp_path: Path) -> None:
    done = refused(new_user(tmp_path), tmp_path, "0.0.0.0")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines() == [refusal("0.0.0.0")]


def refusal(host: str) -> str:
    return (
        f"compaction: error [invalid_config]: --host {host} needs COMPACTION_GATEWAY_TOKEN: "
        "without a token the gateway listens on 127.0.0.1 only"
    )


@pytest.mark.parametrize("host", ["::", "192.0.2.7", "10.0.0.1", "example.org"])
def test_only_the_loopback_without_a_token(
    host: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    keep_logging: None,
) -> None:
    cli = in_process({}, monkeypatch, capsys, tmp_path)
    done = cli("gateway", "--host", host, ok=False)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines() == [refusal(host)]


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_loopback_hosts_need_no_token(host: str) -> None:
    check_host(host, Settings(_env_file=None))


def test_with_a_token_any_host_and_every_call_needs_it(tmp_path: Path) -> None:
    token = "a-long-enough-gateway-token-0123456789"
    env = new_user(tmp_path, COMPACTION_GATEWAY_TOKEN=token)
    with gateway(env, tmp_path, "--host", "0.0.0.0") as (url, _process):
        assert httpx.get(f"{url}/api/sessions").status_code == 401
        wrong = httpx.get(f"{url}/api/sessions", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        listed = httpx.get(f"{url}/api/sessions", headers={"Authorization": f"Bearer {token}"})
        assert listed.status_code == 200
    assert "no COMPACTION_GATEWAY_TOKEN" not in (tmp_path / "err.txt").read_text()
    assert token not in (tmp_path / "out.txt").read_text() + (tmp_path / "err.txt").read_text()


def test_the_token_of_a_socket_or_stream_url_is_never_logged(tmp_path: Path) -> None:
    """At INFO uvicorn logs each request's URL, and a WebSocket's or an SSE stream's carries the
    token as ``?token=``: every line, uvicorn's included, shows it as ``token=***``
    (docs/architecture.md, "Logs and metrics")."""
    token = "a-long-enough-gateway-token-0123456789"
    env = new_user(tmp_path, COMPACTION_GATEWAY_TOKEN=token)
    with gateway(env, tmp_path, "--log-level", "INFO") as (url, _process):
        with httpx.stream("GET", f"{url}/api/sessions/demo-en/events?token={token}") as events:
            assert events.status_code == 200
        ws_url = "ws" + url.removeprefix("http")
        with connect(f"{ws_url}/ws/sessions/demo-en?token={token}&x=1"):
            pass
    err = (tmp_path / "err.txt").read_text()
    assert token not in (tmp_path / "out.txt").read_text() + err
    lines = [json.loads(line) for line in err.splitlines()]
    masked = [line for line in lines if "token=***" in str(line["msg"])]
    assert {line["logger"] for line in masked} == {"uvicorn.access", "uvicorn.error"}
    assert any("token=***&x=1" in str(line["msg"]) for line in masked)


def wait_for_run(client: httpx.Client, session: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        runs = client.get(f"/api/sessions/{session}/runs").json()["runs"]
        if runs and runs[-1]["status"] != "running":
            return dict(runs[-1])
        time.sleep(0.1)
    pytest.fail(f"no finished run of {session}")


def test_a_new_user_gets_the_embedded_gateway(tmp_path: Path) -> None:
    """Nothing configured: the bundled sessions are there, /compact runs on the in-process
    worker with the offline summarizer, the offline model answers; on SIGTERM it exits 0 and
    its temporary database is gone. Nothing is written under HOME."""
    home = tmp_path / "home"
    with gateway(new_user(home), tmp_path) as (url, process):
        out = (tmp_path / "out.txt").read_text()
        named = re.search(r"database: sqlite:///(\S+)", out)
        assert named, out
        database = Path(named.group(1))
        assert database.exists()
        err = (tmp_path / "err.txt").read_text()
        assert "no COMPACTION_GATEWAY_TOKEN set: listening on 127.0.0.1 only" in err
        with httpx.Client(base_url=url, timeout=30) as client:
            assert client.get("/healthz").json() == {"status": "ok"}
            assert "app.js" in client.get("/").text
            listed = {s["id"]: s for s in client.get("/api/sessions").json()["sessions"]}
            assert set(listed) == {"demo-en", "demo-zh"}
            assert listed["demo-en"]["messages"] == 166
            assert all(s["percent"] > s["thresholdPercent"] for s in listed.values())
            rows = client.get("/api/sessions/demo-en/history", params={"view": "compacted"})
            assert len(rows.json()["messages"]) == 166

            queued = client.post("/api/sessions/demo-en/compact", json={})
            assert queued.status_code == 202 and queued.json()["status"] == "enqueued"
            run = wait_for_run(client, "demo-en")
            assert run["status"] == "succeeded" and run["removedCount"] > 0
            compacted = client.get("/api/sessions/demo-en/history").json()["messages"]
            assert sum(r["isCompactionSummary"] for r in compacted) == 1

            turn = client.post("/api/sessions/demo-zh/messages", json={"content": "继续"})
            assert turn.status_code == 200, turn.text
            assert "继续" in turn.json()["reply"]["content"]  # the offline model quotes it
        process.send_signal(signal.SIGTERM)
        assert process.wait(20) == 0
    assert not database.parent.exists()
    assert not home.exists() or not any(home.rglob("*.db"))


def test_a_port_in_use_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [str(COMPACTION), "gateway", "--port", str(port)],
            cwd=tmp_path,
            env=new_user(tmp_path),
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        f"compaction: error [io_error]: the gateway could not listen on 127.0.0.1:{port}"
    )


def test_with_services_configured_it_runs_no_worker(
    tmp_path: Path, redis_namespace: RedisNamespace, redis_client: Any
) -> None:
    """COMPACTION_DATABASE_URL and REDIS_URL set: a stateless gateway; a /compact waits in the
    queue for a ``compaction worker``, and nothing is imported."""
    name, database = create_database()
    try:
        upgrade(database)
        env = new_user(tmp_path, COMPACTION_DATABASE_URL=database, **redis_namespace.env())
        with gateway(env, tmp_path) as (url, _process), httpx.Client(base_url=url) as client:
            assert client.get("/api/sessions").json() == {"sessions": []}
            created = client.post(
                "/api/sessions", json={"messages": [{"role": "user", "content": "hi"}] * 6}
            )
            session = created.json()["id"]
            assert client.post(f"/api/sessions/{session}/compact", json={}).status_code == 202
            time.sleep(1.0)  # an in-process worker would have taken it by now
            queue = compaction_queue(redis_client, redis_namespace.queue)
            assert queue.count == 1
            assert client.get(f"/api/sessions/{session}/runs").json() == {"runs": []}
    finally:
        drop_database(name)
