"""A ``/compact`` sent while an automatic request of the session is still queued upgrades it
(docs/architecture.md, "The job", "One queued request per session"): the queued request runs as
a manual one with the ``/compact``'s focus, and the caller waits on it. However the upgrade and
a worker starting the queued job interleave, the ``/compact`` is never lost: either the job
runs upgraded, or the ``/compact`` is queued to run after it. Real PostgreSQL and Redis, the
producers' API and command line, RQ's worker in this process."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from functools import partial

import pytest

from compaction.core.contract import CompactionDone, CompactionRequested, parse_event
from compaction.producers import trigger
from compaction.producers.context import Producers
from compaction.producers.wait import wait_for_request
from compaction.service.keys import events_stream, pending_key, upgrade_key
from compaction.service.queue import EnqueueResult, pending_request, submit, take_pending
from compaction.worker.jobs import run
from tests.fakes import conversation
from tests.integration.producer_helpers import drain, queue, session_with
from tests.integration.worker_helpers import Harness, auto, manual, wait_until
from tests.llm_server import FakeLLM
from tests.services import stream_entries

FOCUS = "keep the database schema decisions"


def session_events(ctx: Producers, session_id: str) -> list[tuple[str, str | None, str | None]]:
    stream = events_stream(ctx.settings.channel_prefix)
    parsed = [parse_event(fields[b"event"]) for _id, fields in stream_entries(ctx.redis, stream)]
    return [(e.type, e.request_id, e.reason) for e in parsed if e.session_id == session_id]


def upgrade_left(ctx: Producers, session_id: str) -> int:
    prefix = ctx.settings.channel_prefix
    return int(ctx.redis.exists(pending_key(prefix, session_id), upgrade_key(prefix, session_id)))


def test_a_compact_upgrades_the_queued_auto_request(ctx: Producers, fake_llm: FakeLLM) -> None:
    session_id = session_with(ctx, 20)  # over the threshold
    queued = trigger.check_and_enqueue(ctx, session_id)
    assert queued.status == "enqueued" and queued.request_id is not None

    compact = trigger.request_manual(ctx, session_id, focus=FOCUS)

    assert compact == EnqueueResult("upgraded", queued.request_id)
    assert len(queue(ctx)) == 1  # nothing more queued
    assert compact.request_id is not None
    drain(ctx)
    final = wait_for_request(ctx, session_id, compact.request_id, timeout=10)
    assert isinstance(final, CompactionDone), final
    assert final.reason == "manual" and final.summary_message_id is not None
    assert len(fake_llm.requests) == 1 and FOCUS in fake_llm.bodies_text()
    assert session_events(ctx, session_id) == [
        (kind, queued.request_id, "manual")
        for kind in ("compaction_start", "compaction_done", "token_update")
    ]
    [record] = ctx.store.runs(session_id)
    assert (record.status, record.reason, record.request_id) == (
        "succeeded",
        "manual",
        queued.request_id,
    )
    rows = [r for r in ctx.store.load_history(session_id, "full") if r.is_event]
    assert (rows[0].metadata or {})["reason"] == "manual"  # the "compacting" bubble
    assert upgrade_left(ctx, session_id) == 0


def test_a_queued_manual_or_upgraded_request_answers_already_pending(ctx: Producers) -> None:
    """One upgrade per queued request; a queued manual request is not upgraded (its own focus
    stands) and an auto request does not queue behind either."""
    upgraded, manual_first = session_with(ctx, 20), session_with(ctx, 20)
    queued = trigger.check_and_enqueue(ctx, upgraded)
    assert trigger.request_manual(ctx, upgraded, focus=FOCUS).status == "upgraded"
    again = trigger.request_manual(ctx, upgraded, focus="something else")
    assert again == EnqueueResult("already_pending", queued.request_id)

    first = trigger.request_manual(ctx, manual_first, focus=FOCUS)
    assert first.status == "enqueued"
    second = trigger.request_manual(ctx, manual_first, focus="something else")
    assert second == EnqueueResult("already_pending", first.request_id)
    follower = trigger.check_and_enqueue(ctx, manual_first)
    assert (follower.status, follower.request_id) == ("already_pending", first.request_id)
    assert len(queue(ctx)) == 2


def test_a_compact_before_or_after_the_worker_takes_the_auto_request(ctx: Producers) -> None:
    """The two orders the worker's take and the upgrade can come in, each one step in Redis."""
    prefix, settings = ctx.settings.channel_prefix, ctx.settings
    session_id = session_with(ctx, 20)
    queued = auto(session_id)
    compact = manual(session_id, focus=FOCUS)

    assert submit(ctx.redis, settings, queued).status == "enqueued"
    assert submit(ctx.redis, settings, compact).status == "upgraded"
    started = take_pending(ctx.redis, prefix, queued)
    assert (started.request_id, started.reason, started.focus) == (
        queued.request_id,
        "manual",
        FOCUS,
    )
    assert upgrade_left(ctx, session_id) == 0

    later = auto(session_id)
    assert submit(ctx.redis, settings, later).status == "enqueued"
    assert take_pending(ctx.redis, prefix, later) == later  # taken: runs as it was queued
    assert submit(ctx.redis, settings, compact) == EnqueueResult("enqueued", compact.request_id)
    assert pending_request(ctx.redis, prefix, session_id) == compact.request_id


def test_an_upgrade_racing_the_worker_is_never_lost(ctx: Producers) -> None:
    """Many times over, a worker takes the queued auto request while a ``/compact`` arrives:
    the ``/compact`` either upgrades the request the worker runs, or is queued itself."""
    prefix, settings = ctx.settings.channel_prefix, ctx.settings
    session_id = session_with(ctx, 20)
    outcomes: Counter[str] = Counter()
    for attempt in range(150):
        queued = auto(session_id)
        compact = manual(session_id, focus=f"{FOCUS} {attempt}")
        assert submit(ctx.redis, settings, queued).status == "enqueued"
        started, answer = _at_once(
            partial(take_pending, ctx.redis, prefix, queued),
            partial(submit, ctx.redis, settings, compact),
        )
        assert isinstance(started, CompactionRequested) and isinstance(answer, EnqueueResult)
        if answer.status == "upgraded":
            assert answer.request_id == queued.request_id
            assert (started.reason, started.focus) == ("manual", compact.focus)
            assert pending_request(ctx.redis, prefix, session_id) is None
        else:
            assert answer == EnqueueResult("enqueued", compact.request_id)
            assert started == queued
            assert pending_request(ctx.redis, prefix, session_id) == compact.request_id
            assert take_pending(ctx.redis, prefix, compact) == compact
        assert upgrade_left(ctx, session_id) == 0
        outcomes[answer.status] += 1
    assert sum(outcomes.values()) == 150, outcomes


def _at_once(*calls: Callable[[], object]) -> list[object]:
    """The calls' results, each called in its own thread released at the same moment."""
    barrier = threading.Barrier(len(calls))
    results: list[object] = [None] * len(calls)

    def go(index: int) -> None:
        barrier.wait()
        results[index] = calls[index]()

    threads = [threading.Thread(target=go, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return results


def test_the_command_line_says_upgraded_and_waits_on_that_request(
    h: Harness,
    command: Callable[..., tuple[int, str, str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``compaction compact --focus`` answers ``upgraded`` with the queued request's id and
    exits 0; with ``--wait`` it ends with that request's ``compaction_done``, run as manual."""
    for name, value in h.namespace.env().items():
        monkeypatch.setenv(name, value)
    runtime = h.runtime()
    h.channel("openai")
    told, waited = h.session(conversation(12)), h.session(conversation(12))
    queued = {session_id: auto(session_id) for session_id in (told, waited)}
    for request in queued.values():
        assert submit(h.redis, runtime.settings, request).status == "enqueued"

    assert command("compact", told, "--focus", FOCUS) == (
        0,
        f"upgraded {queued[told].request_id}\n",
        "",
    )

    key = upgrade_key(runtime.settings.channel_prefix, waited)

    def work() -> None:
        """The worker takes the queued job once the ``/compact`` has upgraded it."""
        wait_until(lambda: h.redis.exists(key), "the upgrade")
        run(runtime, queued[waited])

    worker = threading.Thread(target=work)
    worker.start()
    status, out, _ = command("compact", waited, "--focus", FOCUS, "--wait", "--timeout", "30")
    worker.join(timeout=30)
    assert status == 0, out
    done = parse_event(out)
    assert isinstance(done, CompactionDone), done
    assert (done.request_id, done.reason) == (queued[waited].request_id, "manual")
    assert FOCUS in h.fake.bodies_text()
