"""Metrics (docs/architecture.md, "Logs and metrics"): jobs run in this process count by
outcome and code; a worker process serves its own counts, a pool's endpoint the sum over its
processes, a forking worker counts the jobs of every work horse, and the multiprocess files go
with the worker. The workers are real ``compaction worker`` processes, started, fed and stopped
with the fixtures of ``conftest.py`` and the helpers of ``process_helpers.py``."""

from __future__ import annotations

import urllib.request
from pathlib import Path

from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families
from rq import Queue, Worker

from compaction.core.contract import CompactionDone, CompactionFailed, CompactionSkipped
from compaction.service.keys import lock_key
from compaction.store import Store
from compaction.worker.jobs import run
from tests.fakes import conversation
from tests.integration.process_helpers import (
    Proc,
    Processes,
    Server,
    final_event,
    new_session,
    request,
    wait_for,
)
from tests.integration.worker_helpers import SQLITE_ONLY, Harness, auto, manual
from tests.llm_server import FakeLLM, Reply
from tests.processes import stop
from tests.services import free_port

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]
DONE = frozenset({("outcome", "done"), ("code", "")})


def scrape(port: int) -> Samples | None:
    """Every sample of ``/metrics``, by name and labels; ``None`` while nothing answers."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
            text = reply.read().decode()
    except OSError:
        return None
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def jobs_done(port: int, count: int, proc: Proc) -> Samples:
    """The samples, once ``compaction_jobs_total{outcome="done"}`` reached ``count``."""

    def reached() -> Samples | None:
        samples = scrape(port) or {}
        return samples if samples.get(("compaction_jobs_total", DONE), 0) >= count else None

    return wait_for(reached, 15, f"{count} done jobs on /metrics", proc)


def worker(processes: Processes, tmp: Path, *args: str) -> Proc:
    """``compaction worker ARGS`` with ``tmp`` as its temporary directory, where the
    multiprocess files go."""
    return processes.worker(*args, env={**processes.env, "TMPDIR": str(tmp)})


def metrics_dirs(tmp: Path) -> list[Path]:
    return sorted(tmp.glob("compaction-metrics-*"))


@SQLITE_ONLY
def test_metrics_count_jobs_by_outcome_and_code(h: Harness) -> None:
    """Jobs run in this process add to its registry: one series per outcome and code."""
    series = [
        ("done", ""),
        ("failed", "summary_too_short"),
        ("skipped", "below_threshold"),
        ("skipped", "lock_held"),
    ]
    before = {(o, c): _sample("compaction_jobs_total", outcome=o, code=c) for o, c in series}
    skips = _sample("compaction_job_duration_seconds_count", outcome="skipped")
    saved = _sample("compaction_tokens_saved_total")
    runtime = h.runtime()
    h.channel("openai")
    big = h.session(conversation(12))
    small = h.session(conversation(12))
    held = h.session(conversation(12))

    done = run(runtime, manual(big))
    h.script(Reply(text=""))
    failed = run(runtime, manual(small))
    skipped = run(runtime, auto(small))
    h.redis.set(lock_key(h.namespace.prefix, held), "other-worker")
    busy = run(runtime, auto(held))
    assert isinstance(done, CompactionDone)
    assert isinstance(failed, CompactionFailed) and failed.code == "summary_too_short"
    assert isinstance(skipped, CompactionSkipped) and skipped.code == "below_threshold"
    assert isinstance(busy, CompactionSkipped) and busy.code == "lock_held"

    after = {(o, c): _sample("compaction_jobs_total", outcome=o, code=c) for o, c in series}
    assert {s: after[s] - before[s] for s in series} == dict.fromkeys(series, 1)
    assert _sample("compaction_job_duration_seconds_count", outcome="skipped") == skips + 2
    saving = done.tokens_before - done.tokens_after
    assert _sample("compaction_tokens_saved_total") == saved + saving


def _sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_a_worker_serves_its_own_counts(
    process_store: Store, fake_llm: FakeLLM, rdb: Server, processes: Processes, tmp_path: Path
) -> None:
    port = free_port()
    single = worker(processes, tmp_path, "--metrics-port", str(port))
    for _ in range(2):
        req = request(rdb, new_session(process_store))
        assert final_event(rdb, req.request_id, single)["type"] == "compaction_done"

    samples = jobs_done(port, 2, single)
    assert samples[("compaction_jobs_total", DONE)] == 2
    assert samples[("compaction_job_duration_seconds_count", frozenset({("outcome", "done")}))] == 2
    assert metrics_dirs(tmp_path) == [], "one process: its own registry, no files"


def test_a_pool_serves_the_sum_over_its_processes(
    process_store: Store, fake_llm: FakeLLM, rdb: Server, processes: Processes, tmp_path: Path
) -> None:
    fake_llm.script(Reply(delay_s=1.0))  # each worker holds a job long enough for the other
    port = free_port()
    pool = worker(processes, tmp_path, "--pool", "2", "--metrics-port", str(port))

    def two_idle_workers() -> bool:
        workers = Worker.all(queue=Queue(rdb.names.queue, connection=rdb.client))
        return len(workers) == 2 and all(w.get_state() == "idle" for w in workers)

    wait_for(two_idle_workers, 30, "the pool's two workers", pool)
    requests = [request(rdb, new_session(process_store)) for _ in range(4)]
    events = [final_event(rdb, r.request_id, pool, timeout=60) for r in requests]
    assert [e["type"] for e in events] == ["compaction_done"] * 4, events
    ran_by = {run.worker for r in requests for run in process_store.runs(r.session_id)}
    assert len(ran_by) == 2, ran_by  # both processes counted some

    samples = jobs_done(port, 4, pool)
    assert samples[("compaction_jobs_total", DONE)] == 4
    assert samples[("compaction_job_duration_seconds_count", frozenset({("outcome", "done")}))] == 4
    saved = sum(e["tokensBefore"] - e["tokensAfter"] for e in events)
    assert samples[("compaction_tokens_saved_total", frozenset())] == saved
    [directory] = metrics_dirs(tmp_path)
    assert len(list(directory.glob("counter_*.db"))) == 2  # one per worker process


def test_a_forking_worker_counts_every_work_horse(
    process_store: Store, fake_llm: FakeLLM, rdb: Server, processes: Processes, tmp_path: Path
) -> None:
    fake_llm.script(Reply())
    port = free_port()
    forking = worker(processes, tmp_path, "--fork", "--metrics-port", str(port))
    for _ in range(3):
        req = request(rdb, new_session(process_store))
        assert final_event(rdb, req.request_id, forking)["type"] == "compaction_done"

    assert jobs_done(port, 3, forking)[("compaction_jobs_total", DONE)] == 3
    # the horses, one at a time, wrote their worker's files: not a counter file per job
    [directory] = metrics_dirs(tmp_path)
    assert len(list(directory.glob("counter_*.db"))) == 1
    assert stop(forking.popen) == 0, forking.tail()
    assert not directory.exists(), "the metrics files go with the worker"
