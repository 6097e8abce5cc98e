"""The asyncio twins of the producers (producers/aio.py): check, wait and relay in one event
loop."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from compaction.core.contract import AnyEvent
from compaction.producers import aio, configure
from compaction.producers.context import Producers
from tests.integration.producer_helpers import looked_up, run_queued, session_with


def test_asyncio_twins(ctx: Producers, monkeypatch: pytest.MonkeyPatch) -> None:
    looked = looked_up(monkeypatch, aio)
    session_id = session_with(ctx, 20)
    configure(ctx)
    try:

        async def scenario() -> tuple[str, Sequence[str], AnyEvent | None]:
            async with aio.AsyncEventRelay(session_id, ctx=ctx) as relay:
                result = await aio.check_and_enqueue(session_id)
                waited = asyncio.create_task(aio.wait_for_compaction(session_id, timeout=20))
                assert await asyncio.to_thread(looked.wait, 30)
                await asyncio.to_thread(run_queued, ctx)
                final = await waited
                kinds = [e.type async for e in relay.events(timeout=1)]
            return result.status, kinds, final

        status, kinds, final = asyncio.run(scenario())
    finally:
        configure(None)
    assert status == "enqueued"
    assert kinds == ["compaction_start", "compaction_done", "token_update"]
    assert final is not None and final.type == "compaction_done"
