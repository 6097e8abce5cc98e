"""Benchmark of the gateway's live path (issue 13).

    python -m benchmarks.gateway [--clients 200] [--events 400] [--turns 200]

One ``compaction gateway`` process (uvicorn) on the benchmark's PostgreSQL database and a
namespace of its own on the shared Redis; this process holds the WebSocket clients (asyncio,
``websockets``) and the loopback fake LLM (``tests/llm_server.py``) that a chat channel points
at. Prints, without asserting anything:

- events from ``EventPublisher.publish`` (what a worker calls) to their receipt by a client:
  p50 and p95, with every client on a session of its own, then all on one session (one publish,
  every client);
- the message round trip (``POST /api/sessions/{id}/messages``: the user's message stored, the
  pre-call check, the fake model, the reply stored, ``token_update``), against the fake model
  called alone.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from websockets.asyncio.client import ClientConnection, connect

from benchmarks.processes import REDIS_URL, worker_env
from benchmarks.store import migrated_store
from benchmarks.turn_phases import turn_phases
from compaction.core.contract import ContextUsage, TokenUpdate
from compaction.service.events import EventPublisher
from compaction.store import Store
from tests.llm_server import FakeLLM, Reply, serve
from tests.namespace import RedisNamespace, scoped
from tests.processes import COMPACTION, start, stop

TOKEN = "bench-gateway-token"
#: between two publishes (latency, not throughput, is measured): one client per session, then
#: all clients on one session (each publish is a burst of one send per client)
SPACING_S = 0.005
BURST_SPACING_S = 0.1


def percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[max(0, int(len(ordered) * 0.95) - 1)]
    return (
        f"p50 {statistics.median(ordered):7.2f} ms   p95 {p95:7.2f} ms   ({len(ordered)} samples)"
    )


@contextmanager
def gateway_process(database_url: str, namespace: RedisNamespace) -> Iterator[str]:
    """``compaction gateway --port 0``; its base URL once it listens (the address it prints)."""
    env = worker_env(database_url, namespace, COMPACTION_GATEWAY_TOKEN=TOKEN)
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "gateway.log"
        process = start([str(COMPACTION), "gateway", "--port", "0"], env, log)
        try:
            deadline = time.monotonic() + 60
            while not (found := re.search(r"console: (http://\S+?)/?\s", log.read_text())):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"the gateway did not start:\n{log.read_text()}")
                time.sleep(0.05)
            yield found.group(1)
        finally:
            stop(process)


def event(session_id: str, seq: int) -> TokenUpdate:
    """A ``token_update`` numbered by its used tokens."""
    usage = ContextUsage(used_tokens=seq, max_tokens=1_000_000, percent=0.0, threshold_percent=70)
    return TokenUpdate(session_id=session_id, context=usage)


async def receive(socket: ClientConnection, sent: dict[int, float], out: list[float]) -> None:
    async for text in socket:
        now = time.perf_counter()
        data = json.loads(text)
        if data.get("type") == "token_update":
            out.append((now - sent[data["context"]["usedTokens"]]) * 1000)


def publish_all(
    publisher: EventPublisher, targets: list[str], sent: dict[int, float], spacing: float
) -> None:
    for seq, session_id in enumerate(targets):
        sent[seq] = time.perf_counter()
        publisher.publish(event(session_id, seq))
        time.sleep(spacing)


async def fan_out(
    base: str, publisher: EventPublisher, sockets_on: list[str], targets: list[str]
) -> list[float]:
    """``sockets_on``: the session of each client; ``targets``: the session of each event."""
    ws_base = "ws" + base.removeprefix("http")
    sockets = [
        await connect(f"{ws_base}/ws/sessions/{s}?token={TOKEN}", max_queue=None)
        for s in sockets_on
    ]
    sent: dict[int, float] = {}
    latencies: list[float] = []
    readers = [asyncio.create_task(receive(s, sent, latencies)) for s in sockets]
    expected = sum(sockets_on.count(t) for t in targets)
    spacing = SPACING_S if len(set(sockets_on)) > 1 else BURST_SPACING_S
    await asyncio.to_thread(publish_all, publisher, targets, sent, spacing)
    deadline = time.monotonic() + 30
    while len(latencies) < expected and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    for socket in sockets:
        await socket.close()
    await asyncio.gather(*readers, return_exceptions=True)
    if len(latencies) < expected:
        print(f"  (only {len(latencies)} of {expected} receipts within 30 s)")
    return latencies


def round_trips(base: str, sessions: list[str], turns: int) -> list[float]:
    samples = []
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
        for n in range(turns):
            session_id = sessions[n % len(sessions)]
            started = time.perf_counter()
            answer = client.post(f"/api/sessions/{session_id}/messages", json={"content": f"q{n}"})
            samples.append((time.perf_counter() - started) * 1000)
            answer.raise_for_status()
    return samples[len(sessions) :]  # each session's first turn warms its caches


def model_alone(fake: FakeLLM, calls: int) -> list[float]:
    samples = []
    body = {"model": "chat-1", "messages": [{"role": "user", "content": "q"}]}
    with httpx.Client(base_url=fake.url_for("openai"), timeout=60) as client:
        for _ in range(calls):
            started = time.perf_counter()
            client.post("/chat/completions", json=body).raise_for_status()
            samples.append((time.perf_counter() - started) * 1000)
    return samples


def prepare(store: Store, fake: FakeLLM, clients: int) -> list[str]:
    store.add_channel(
        "chat",
        provider="openai-compatible",
        model="chat-1",
        base_url=fake.url_for("openai"),
        api_key="sk-bench-unused",
    )
    fake.script(Reply(text="A short answer from the fake model."))
    return [store.create_session(f"bench-{n}", model="chat-1") for n in range(clients)]


def run(args: argparse.Namespace) -> None:
    namespace = RedisNamespace.fresh(REDIS_URL, tag="bench")
    with (
        migrated_store() as (url, store),
        scoped(namespace) as client,
        serve() as fake,
    ):
        sessions = prepare(store, fake, args.clients)
        publisher = EventPublisher(client, prefix=namespace.prefix)
        with gateway_process(url, namespace) as base:
            print(f"\nevents, publish -> client receipt ({args.clients} WebSocket clients):")
            spread = [sessions[n % len(sessions)] for n in range(args.events)]
            latencies = asyncio.run(fan_out(base, publisher, sessions, spread))
            row(f"{args.clients} sessions x 1 client, {args.events} events", latencies)
            bursts = [sessions[0]] * max(1, args.events // 20)
            latencies = asyncio.run(fan_out(base, publisher, [sessions[0]] * args.clients, bursts))
            row(f"1 session x {args.clients} clients, {len(bursts)} events", latencies)
            print(f"\nmessage round trip, POST /messages, {args.turns} turns on 10 sessions:")
            row("gateway turn (fake model)", round_trips(base, sessions[:10], args.turns))
            row("the fake model alone", model_alone(fake, args.turns))
        turn_phases(url, namespace, sessions[10:20] or sessions[:10], args.turns)


def row(label: str, samples: list[float]) -> None:
    print(f"  {label:40} {percentiles(samples)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="the gateway's events and message round trip")
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--events", type=int, default=400)
    parser.add_argument("--turns", type=int, default=200)
    args = parser.parse_args(argv)
    print(f"$ python -m benchmarks.gateway {' '.join(argv or sys.argv[1:])}".rstrip())
    print(f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores")
    run(args)
    print(f"\nload average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
