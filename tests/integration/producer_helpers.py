"""Helpers of the producers' tests (``test_producers_*.py``, ``test_worker_ingress.py``; the
``ctx`` fixture is in ``conftest.py``): a session of some turns, the test's queue, RQ's own
SimpleWorker running the queued jobs in this process (or the job run directly, off the main
thread), and a spy on a waiter's lookup."""

from __future__ import annotations

import threading
from types import ModuleType

import pytest
from rq import Queue, SimpleWorker
from rq.serializers import JSONSerializer

from compaction.producers.context import Producers
from compaction.service.queue import compaction_queue
from compaction.worker.jobs import compaction_requested
from tests.fakes import conversation


def session_with(ctx: Producers, turns: int) -> str:
    session_id = ctx.store.create_session()
    ctx.store.append_messages(session_id, conversation(turns))
    return session_id


def queue(ctx: Producers) -> Queue:
    """The test's own queue (``redis_namespace``)."""
    return compaction_queue(ctx.redis, ctx.settings.queue_name)


def drain(ctx: Producers) -> None:
    """Run every queued job with RQ's SimpleWorker, in this process (JSON serializer)."""
    SimpleWorker([queue(ctx)], connection=ctx.redis, serializer=JSONSerializer).work(burst=True)


def run_queued(ctx: Producers) -> None:
    """Run the queued jobs without RQ's signal handling, so off the main thread too."""
    for job in queue(ctx).jobs:
        compaction_requested(job.args[0])
        job.delete()


def looked_up(monkeypatch: pytest.MonkeyPatch, module: ModuleType) -> threading.Event:
    """Set once a waiter in ``module`` has read which request is queued or running: from then
    on it gets that request's final event, even one published before it reads the stream."""
    seen = threading.Event()
    original = module.queued_or_running

    def spy(*args: object) -> object:
        try:
            return original(*args)
        finally:
            seen.set()

    monkeypatch.setattr(module, "queued_or_running", spy)
    return seen
