"""Part 3 of ``python -m benchmarks.worker``: scale-out over worker processes.

Sessions holding a copy of ``msa_deepseek-chat_pydicom-1139``, the fake auxiliary model of
``tests/llm_server.py`` answering every request after 1 s, and ``compaction worker --pool N``
(``compaction worker`` for N = 1). Prints jobs/s, efficiency against the ideal of N jobs/s, each
worker process's memory, and the CPU each job costs by whom (see ``benchmarks/worker.py``).
"""

from __future__ import annotations

import math
import os
import statistics
import time
from collections import defaultdict
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from rq import Queue

from benchmarks.engine import load_transcript as load
from benchmarks.engine import window_for
from benchmarks.processes import REDIS_URL, Events, wait_for_workers, worker_env
from benchmarks.store import sessions
from compaction import estimate_messages_tokens
from compaction.core.contract import CompactionRequested
from compaction.service.queue import compaction_queue, enqueue
from compaction.store import Store
from tests.namespace import RedisNamespace, scoped
from tests.processes import COMPACTION, start, stop

MID_SIZE = "msa_deepseek-chat_pydicom-1139"


def memory_kib(pid: int) -> tuple[int, int]:
    """RSS and PSS of a process, in KiB."""
    rss = pss = 0
    with suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    with suppress(OSError):
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                pss = int(line.split()[1])
    return rss, pss


def children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with suppress(OSError):
            stat = (entry / "stat").read_text()
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry.name))
    return out


def cpu_by_group(workers: list[int]) -> dict[str, float]:
    """CPU seconds so far (user + system) of the worker processes, this process (the fake LLM,
    enqueueing), PostgreSQL and Redis; ``machine`` and ``busy``: the whole machine, all cores."""
    ticks = os.sysconf("SC_CLK_TCK")
    out = dict.fromkeys(("workers", "bench", "postgres", "redis"), 0.0)
    me, members = os.getpid(), set(workers)
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with suppress(OSError):
            comm, rest = (entry / "stat").read_text().split(" (", 1)[1].rsplit(")", 1)
            fields = rest.split()
            seconds = (int(fields[11]) + int(fields[12])) / ticks
            pid = int(entry.name)
            if pid in members:
                out["workers"] += seconds
            elif pid == me:
                out["bench"] += seconds
            elif comm == "postgres":
                out["postgres"] += seconds
            elif comm.startswith("redis-server"):
                out["redis"] += seconds
    stat = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    out["machine"] = sum(stat) / ticks
    out["busy"] = (sum(stat) - stat[3] - stat[4]) / ticks  # less idle and iowait
    return out


@dataclass(frozen=True)
class Row:
    """What one worker count measured."""

    workers: int
    jobs: int
    seconds: float  # the measured jobs, first enqueued to last final event read
    up_s: float  # start to the N workers registered
    warm_s: float  # the N warm-up jobs
    outcomes: dict[str, int]  # final events by type
    memory: list[tuple[int, int]]  # RSS, PSS (KiB) of each worker process
    parent: tuple[int, int]  # the pool's own process (zero for one worker)
    cpu: dict[str, float]  # CPU seconds spent by group during the measured jobs


def run_jobs(
    queue: Queue, events: Events, session_ids: list[str], window: int
) -> tuple[float, float, set[str]]:
    """Enqueue a job per session at once; the first enqueue's time, the last final event's,
    and the request ids."""
    ids = set()
    first = time.time()
    for session_id in session_ids:
        request = CompactionRequested(session_id=session_id, reason="manual", context_window=window)
        enqueue(queue, request, timeout_s=120)
        ids.add(request.request_id)
    events.wait(ids, timeout=60 + 3 * len(session_ids))
    last = max(events.final[i][1] for i in ids)
    return first, last, ids


def measure(store: Store, url: str, workers: int, jobs: int) -> Row:
    messages = load(MID_SIZE)
    window = window_for(messages)
    warm = sessions(store, messages, workers)
    measured = sessions(store, messages, jobs)
    argv = [str(COMPACTION), "worker", "--log-level", "WARNING"]
    if workers > 1:
        argv += ["--pool", str(workers)]
    namespace = RedisNamespace.fresh(REDIS_URL, tag="bench")
    with scoped(namespace) as client:
        process = start(argv, worker_env(url, namespace))
        try:
            started = time.monotonic()
            wait_for_workers(client, namespace.queue, workers, process)
            up_s = time.monotonic() - started
            queue = compaction_queue(client, namespace.queue)
            events = Events(client, namespace.prefix)
            first, last, _ = run_jobs(queue, events, warm, window)  # each worker's first job
            warm_s = last - first  # builds its runtime
            pids = children(process.pid) if workers > 1 else [process.pid]
            before = cpu_by_group(pids)
            first, last, ids = run_jobs(queue, events, measured, window)
            after = cpu_by_group(pids)
            outcomes: dict[str, int] = defaultdict(int)
            for request_id in ids:
                outcomes[events.final[request_id][0]] += 1
            memory = [memory_kib(pid) for pid in pids]
            parent = memory_kib(process.pid) if workers > 1 else (0, 0)
        finally:
            stop(process)
    cpu = {k: after[k] - before[k] for k in after}
    return Row(workers, jobs, last - first, up_s, warm_s, outcomes, memory, parent, cpu)


def row_line(row: Row) -> str:
    throughput = row.jobs / row.seconds
    outcomes = dict(row.outcomes)
    done = outcomes.pop("compaction_done", 0)
    other = ", ".join(f"{n} {k}" for k, n in outcomes.items())
    rss = statistics.median(m[0] for m in row.memory) / 1024 if row.memory else 0.0
    pss = statistics.median(m[1] for m in row.memory) / 1024 if row.memory else 0.0
    return (
        f"{row.workers:7d} {row.jobs:5d} {done:5d} {row.seconds:7.2f} {throughput:7.2f} "
        f"{throughput / row.workers:7.1%} {math.ceil(row.jobs / row.workers) / row.seconds:8.1%} "
        f"{rss:7.0f} {pss:7.0f} {row.parent[0] / 1024:7.0f} {len(row.memory):5d} "
        f"{row.up_s:5.1f} {row.warm_s:6.2f}{'  ' + other if other else ''}"
    )


def cpu_line(row: Row) -> str:
    spent, jobs = row.cpu, row.jobs
    ours = sum(spent[k] for k in ("workers", "bench", "postgres", "redis"))
    cores = spent["machine"] / row.seconds
    return (
        f"{row.workers:7d} "
        + " ".join(
            f"{spent[k] / jobs * 1000:8.0f}" for k in ("workers", "postgres", "redis", "bench")
        )
        + f" {(spent['busy'] - ours) / jobs * 1000:8.0f} {spent['busy'] / spent['machine']:6.0%}"
        f" {cores * jobs / max(spent['busy'], 1e-9):9.1f}"
    )


def scale_out(store: Store, url: str, counts: list[int], jobs: list[int]) -> None:
    from tests.llm_server import Reply, serve

    messages = load(MID_SIZE)
    print(
        f"\n3. scale-out: {MID_SIZE} ({len(messages)} messages, "
        f"~{estimate_messages_tokens(messages):,} tokens) per session, fake LLM answering "
        "after 1 s over HTTP; compaction worker --pool N (one warm-up job per worker first)"
    )
    print(
        f"{'workers':>7} {'jobs':>5} {'done':>5} {'s':>7} {'jobs/s':>7} {'eff':>7} "
        f"{'eff/wave':>8} {'RSS MiB':>7} {'PSS MiB':>7} {'parent':>7} {'procs':>5} "
        f"{'up s':>5} {'warm s':>6}"
    )
    cpu_rows = []
    with serve() as fake:
        fake.script(Reply(delay_s=1.0))
        fake.add_channel(store, "bench-http", api_key="sk-bench-0123456789")
        for workers, count in zip(counts, jobs, strict=True):
            row = measure(store, url, workers, count)
            print(row_line(row), flush=True)
            cpu_rows.append(cpu_line(row))
    print(
        "   eff = jobs/s / N (ideal: N jobs/s at 1 s a job); eff/wave = ceil(jobs/N) s / time; "
        "RSS, PSS: median per worker process after the run; parent: the pool's own process; "
        "up s: start to N workers registered; warm s: the N warm-up jobs (cold runtimes)"
    )
    print(
        "\n   CPU per measured job (ms), by whom; busy: the machine's CPU use meanwhile (all "
        "cores); ceiling: jobs/s if the machine's busy CPU per job were the only limit"
    )
    print(
        f"{'workers':>7} {'workers':>8} {'postgres':>8} {'redis':>8} {'fake LLM':>8} "
        f"{'others':>8} {'busy':>6} {'ceiling':>9}"
    )
    for cpu in cpu_rows:
        print(cpu)
