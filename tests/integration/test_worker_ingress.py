"""The stream ingress (worker/ingress.py; docs/architecture.md, "Redis keys"): requests a gateway
adds with a raw ``redis-cli XADD`` are queued; broken ones go to the dead stream, acknowledged,
with a ``compaction_failed`` event where a session can be read."""

from __future__ import annotations

import json
import subprocess
import threading

from compaction.producers.context import Producers
from compaction.producers.relay import EventRelay
from compaction.service.keys import dead_stream, requests_stream
from compaction.worker.ingress import Ingress
from tests.integration.producer_helpers import queue, session_with
from tests.integration.worker_helpers import wait_until
from tests.services import stream_entries


def test_ingress_from_raw_redis_cli_xadd(ctx: Producers) -> None:
    session_id = session_with(ctx, 12)
    ingress = Ingress(ctx.settings, ctx.redis, block_ms=100)
    prefix = ctx.settings.channel_prefix
    stream = requests_stream(prefix)
    valid_id = f"r-valid-{session_id}"  # the job's id derives from it: unique across runs
    valid = json.dumps(
        {
            "sessionId": session_id,
            "reason": "manual",
            "requestId": valid_id,
            "requestedAt": "2026-11-30T00:00:00Z",
        }
    )
    broken = [
        "{not json",
        json.dumps({"sessionId": session_id, "reason": "sometimes", "requestId": "r-bad"}),
        json.dumps({"reason": "manual"}),
    ]
    for payload in [valid, *broken]:
        subprocess.run(
            ["redis-cli", "-u", ctx.settings.redis_url, "XADD", stream, "*", "payload", payload],
            check=True,
            capture_output=True,
        )
    relay = EventRelay(session_id, ctx=ctx)
    thread = threading.Thread(target=ingress.run)
    thread.start()
    wait_until(lambda: ctx.redis.xlen(dead_stream(prefix)) >= 3, "three dead entries")
    ingress.stop.set()
    thread.join(timeout=5)
    jobs = queue(ctx).jobs
    assert [job.args[0]["requestId"] for job in jobs] == [valid_id]
    dead = stream_entries(ctx.redis, dead_stream(prefix))
    assert len(dead) == 3 and all(b"invalid compaction_requested" in f[b"reason"] for _, f in dead)
    failed = [e for e in relay.events(timeout=0.5) if e.type == "compaction_failed"]
    relay.close()
    assert [(e.request_id, e.code) for e in failed] == [("r-bad", "invalid_request")]
    pending = ctx.redis.xpending(stream, "compaction-ingress")
    assert pending["pending"] == 0  # every entry acknowledged, the broken ones too
