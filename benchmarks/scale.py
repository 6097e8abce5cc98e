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
from pathlib import Path

import redis

from benchmarks.engine import load_transcript as load
from benchmarks.engine import window_for
from benchmarks.processes import COMPACTION, Events, start, stop, wait_for_workers, worker_env
from benchmarks.store import sessions
from compaction import estimate_messages_tokens
from compaction.contract import CompactionRequested
from service.queue import compaction_queue, enqueue
from store import Store

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


def scale_row(
    store: Store, url: str, client: redis.Redis, workers: int, jobs: int
) -> tuple[str, str]:
    messages = load(MID_SIZE)
    window = window_for(messages)
    warm = sessions(store, messages, workers)
    measured = sessions(store, messages, jobs)
    argv = [str(COMPACTION), "worker", "--log-level", "WARNING"]
    if workers > 1:
        argv += ["--pool", str(workers)]
    process = start(argv, worker_env(url))
    try:
        started = time.monotonic()
        wait_for_workers(client, workers, process)
        up_s = time.monotonic() - started
        queue = compaction_queue(client)
        events = Events(client)

        def run(session_ids: list[str]) -> tuple[float, float, set[str]]:
            ids = set()
            first = time.time()
            for session_id in session_ids:
                request = CompactionRequested(
                    session_id=session_id, reason="manual", context_window=window
                )
                enqueue(queue, request, timeout_s=120)
                ids.add(request.request_id)
            events.wait(ids, timeout=60 + 3 * len(session_ids))
            last = max(events.final[i][1] for i in ids)
            return first, last, ids

        first, last, _ = run(warm)  # the first job of each worker builds its runtime
        warm_s = last - first
        pids = children(process.pid) if workers > 1 else [process.pid]
        before = cpu_by_group(pids)
        first, last, ids = run(measured)
        seconds = last - first
        after = cpu_by_group(pids)
        outcomes: dict[str, int] = defaultdict(int)
        for request_id in ids:
            outcomes[events.final[request_id][0]] += 1
        memory = [memory_kib(pid) for pid in pids]
        parent = memory_kib(process.pid) if workers > 1 else (0, 0)
    finally:
        stop(process)
    throughput = jobs / seconds
    done = outcomes.pop("compaction_done", 0)
    other = ", ".join(f"{n} {k}" for k, n in outcomes.items())
    rss = statistics.median(m[0] for m in memory) / 1024 if memory else 0.0
    pss = statistics.median(m[1] for m in memory) / 1024 if memory else 0.0
    row = (
        f"{workers:7d} {jobs:5d} {done:5d} {seconds:7.2f} {throughput:7.2f} "
        f"{throughput / workers:7.1%} {math.ceil(jobs / workers) / seconds:8.1%} "
        f"{rss:7.0f} {pss:7.0f} {parent[0] / 1024:7.0f} {len(pids):5d} "
        f"{up_s:5.1f} {warm_s:6.2f}{'  ' + other if other else ''}"
    )
    spent = {k: after[k] - before[k] for k in after}
    ours = sum(spent[k] for k in ("workers", "bench", "postgres", "redis"))
    cores = spent["machine"] / seconds
    cpu = (
        f"{workers:7d} "
        + " ".join(
            f"{spent[k] / jobs * 1000:8.0f}" for k in ("workers", "postgres", "redis", "bench")
        )
        + f" {(spent['busy'] - ours) / jobs * 1000:8.0f} {spent['busy'] / spent['machine']:6.0%}"
        f" {cores * jobs / max(spent['busy'], 1e-9):9.1f}"
    )
    return row, cpu


def scale_out(
    store: Store, url: str, client: redis.Redis, counts: list[int], jobs: list[int]
) -> None:
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
            client.flushdb()
            row, cpu = scale_row(store, url, client, workers, count)
            print(row, flush=True)
            cpu_rows.append(cpu)
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
