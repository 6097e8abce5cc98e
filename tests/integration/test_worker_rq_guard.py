"""Hostile RQ jobs against real worker processes (docs/architecture.md, "The job"): whoever can
write to Redis can enqueue any job on the queue, so a worker runs nothing but the project's job
function, whatever the job names, and times it by its own ``COMPACTION_JOB_TIMEOUT_S``.

Each refusal is checked in every worker mode (``SimpleWorker``, ``--fork``, ``--pool``): the
job ends failed in RQ's failed registry with the reason logged, nothing it names is imported or
called (a module of the test's own, importable by the worker, leaves a file when imported or
run), and the valid request queued behind it is done by the same worker.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from rq import Callback, Queue, SimpleWorker
from rq.registry import FailedJobRegistry
from rq.serializers import JSONSerializer
from rq.webhook import Webhook
from sqlalchemy import text

from compaction.core.contract import CompactionRequested
from compaction.service.keys import JOB_FUNCTION
from compaction.store import Store, make_engine
from compaction.worker.rq_guard import WORKER_OPTIONS
from compaction.worker.runtime import install
from tests.fakes import conversation
from tests.integration.process_helpers import (
    Proc,
    Processes,
    Server,
    conversation_rows,
    final_event,
    new_session,
    request,
    wait_for,
)
from tests.integration.worker_helpers import SQLITE_ONLY, Harness, manual
from tests.llm_server import FakeLLM

#: imported by a worker that obeys a job naming it: each step leaves a file in MARKS
HOSTILE_MODULE = """
import os
from pathlib import Path

MARKS = Path(os.environ["HOSTILE_MARKS"])
(MARKS / "imported").touch()


def run(*args, **kwargs):
    (MARKS / "ran").touch()
"""

MODES = {
    "simple": ("--burst",),
    "fork": ("--burst", "--fork"),
    "pool": ("--burst", "--pool", "2"),
}


def hostile_jobs(queue: Queue, marks: Path, hook_url: str) -> dict[str, str]:
    """Jobs no producer of this project enqueues, by id → what each tries."""
    payload = CompactionRequested(session_id="hostile", reason="manual").to_wire()
    queue.enqueue_call("os.system", args=(f"touch {marks / 'system'}",), job_id="hostile-system")
    queue.enqueue_call("hostile_payload.run", job_id="hostile-import")
    # The project's function, called so that it raises: RQ would then import and run the
    # failure callback, and post the failure to the webhook.
    queue.enqueue_call(
        JOB_FUNCTION, args=(), on_failure=Callback("hostile_payload.run"), job_id="hostile-callback"
    )
    queue.enqueue_call(
        JOB_FUNCTION,
        args=(payload,),
        kwargs={"extra": 1},
        webhooks=[Webhook(hook_url, "failed", method="POST")],
        job_id="hostile-webhook",
    )
    return {
        "hostile-system": "os.system",
        "hostile-import": "hostile_payload.run",
        "hostile-callback": "a failure callback",
        "hostile-webhook": "a webhook",
    }


def log_records(proc: Proc) -> list[dict[str, Any]]:
    records = []
    for line in proc.log.read_text(errors="replace").splitlines():
        if line.startswith("{"):
            records.append(json.loads(line))
    return records


@pytest.mark.parametrize("mode", list(MODES))
def test_only_the_job_function_runs(
    mode: str,
    tmp_path: Path,
    process_store: Store,
    fake_llm: FakeLLM,
    rdb: Server,
    processes: Processes,
) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    modules = tmp_path / "modules"
    modules.mkdir()
    (modules / "hostile_payload.py").write_text(HOSTILE_MODULE)
    path = os.pathsep.join(filter(None, [str(modules), processes.env.get("PYTHONPATH")]))
    env = {**processes.env, "PYTHONPATH": path, "HOSTILE_MARKS": str(marks)}
    queue = Queue(rdb.names.queue, connection=rdb.client, serializer=JSONSerializer)
    hostile = hostile_jobs(queue, marks, f"{fake_llm.base_url}/hook")
    session_id = new_session(process_store)
    valid = request(rdb, session_id)

    worker = processes.worker(*MODES[mode], env=env)
    done = final_event(rdb, valid.request_id, worker, timeout=60)
    try:
        assert worker.popen.wait(60) == 0, worker.tail()
    except subprocess.TimeoutExpired:
        pytest.fail(f"the burst worker did not exit:\n{worker.tail()}")

    assert sorted(p.name for p in marks.iterdir()) == [], "a hostile job imported or ran code"
    assert not [r for r in fake_llm.requests if r.path == "/hook"], "a webhook was sent"
    failed = FailedJobRegistry(queue=queue)
    assert sorted(failed.get_job_ids()) == sorted(hostile)
    refusals = {r["job"]: r for r in log_records(worker) if r.get("msg") == "job refused"}
    assert sorted(refusals) == sorted(hostile), worker.tail()
    assert refusals["hostile-system"]["function"] == "os.system"
    assert done["type"] == "compaction_done", done
    if mode == "simple":  # the very process that refused the others
        [run] = process_store.runs(session_id)
        assert run.worker is not None and run.worker.endswith(f":{worker.pid}")


@SQLITE_ONLY
@pytest.mark.parametrize(
    "data",
    [
        pytest.param(lambda wire: [JOB_FUNCTION, "text", [wire], {}], id="an instance"),
        pytest.param(lambda wire: [JOB_FUNCTION, None, [wire, wire], {}], id="two arguments"),
        pytest.param(lambda wire: ["builtins.print", None, [wire], {}], id="a builtin"),
        # RQ fails it itself, reading the function's name; reading the job must not raise
        pytest.param(lambda wire: {"not": "a job"}, id="not a job tuple"),
    ],
)
def test_job_data_written_into_redis_is_refused(
    h: Harness, data: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """The job hash itself rewritten (RQ's own enqueue cannot make these): failed, nothing
    published; the worker (here RQ's ``SimpleWorker`` with the options every ``compaction
    worker`` uses, in this process) goes on to the next job."""
    install(h.runtime())
    h.channel()
    session_id = h.session(conversation(12))
    queue = Queue(h.namespace.queue, connection=h.redis, serializer=JSONSerializer)
    hostile = queue.enqueue_call(JOB_FUNCTION, args=(manual(session_id).to_wire(),))
    h.redis.hset(hostile.key, "data", json.dumps(data(manual(session_id).to_wire())))
    valid = queue.enqueue_call(JOB_FUNCTION, args=(manual(session_id).to_wire(),))

    SimpleWorker([h.namespace.queue], connection=h.redis, **WORKER_OPTIONS).work(burst=True)

    assert FailedJobRegistry(queue=queue).get_job_ids() == [hostile.id]
    refused = [r.job for r in caplog.records if r.getMessage() == "job refused"]  # type: ignore[attr-defined]
    assert refused == ([] if isinstance(data(None), dict) else [hostile.id])
    events = h.events()
    assert [e.type for e in events] == ["compaction_start", "compaction_done", "token_update"]
    assert {e.request_id for e in events} == {valid.args[0]["requestId"]}


def test_the_worker_times_a_job_by_its_own_setting(
    process_store: Store,
    fake_llm: FakeLLM,
    rdb: Server,
    processes: Processes,
    process_database_url: str,
) -> None:
    """A producer asks for an hour; the worker's own timeout bounds the job
    (``COMPACTION_JOB_TIMEOUT_S``, 5 s, after ``COMPACTION_MANUAL_LOCK_WAIT_S``, 0 here). The
    database stalls the job (this test locks the session's row) until the worker has given up
    on it; the same worker then does the next request."""
    session_id = new_session(process_store)
    compacted = process_store.load_history(session_id)
    engine = make_engine(process_database_url)
    worker = processes.worker(
        "--burst", job_timeout_s="5", manual_lock_wait_s="0", llm_timeout_s="2"
    )
    try:
        with engine.connect() as conn:
            conn.execute(
                text("SELECT id FROM chat_session WHERE id = :id FOR UPDATE"), {"id": session_id}
            )
            stalled = request(rdb, session_id, timeout_s=3_600)
            following = request(rdb, new_session(process_store), timeout_s=3_600)

            def timed_out() -> bool:
                return "JobTimeoutException" in worker_log(worker)

            wait_for(timed_out, 60, "the job's timeout", worker)
            conn.rollback()
        failed = final_event(rdb, stalled.request_id, worker)
        done = final_event(rdb, following.request_id, worker)
    finally:
        engine.dispose()
    assert failed["type"] == "compaction_failed", failed
    assert process_store.load_history(session_id) == compacted
    assert conversation_rows(process_store.load_history(session_id, "full")) == compacted
    assert done["type"] == "compaction_done", done
    assert worker.popen.wait(30) == 0, worker.tail()


def worker_log(proc: Proc) -> str:
    return proc.log.read_text(errors="replace") if proc.log.exists() else ""


def test_a_job_queued_under_the_0_1_name_still_runs(h: Harness) -> None:
    """A request queued by a 0.1.x producer (``worker.jobs.compaction_requested``, before the
    one-namespace rename) is run by this worker during a rolling upgrade: the name is compared,
    never imported."""
    install(h.runtime())
    h.channel()
    session_id = h.session(conversation(12))
    queue = Queue(h.namespace.queue, connection=h.redis, serializer=JSONSerializer)
    old = queue.enqueue_call(
        "worker.jobs.compaction_requested", args=(manual(session_id).to_wire(),)
    )

    SimpleWorker([h.namespace.queue], connection=h.redis, **WORKER_OPTIONS).work(burst=True)

    assert FailedJobRegistry(queue=queue).get_job_ids() == []
    assert [e.type for e in h.events()] == ["compaction_start", "compaction_done", "token_update"]
    assert {e.request_id for e in h.events()} == {old.args[0]["requestId"]}
