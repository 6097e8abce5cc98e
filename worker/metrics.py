"""Prometheus metrics (docs/architecture.md, "Logs and metrics"), counted per process.

Each job adds to ``prometheus_client`` objects in the process that ran it, so the scrapes of
every worker host add up to the totals. Where jobs run in other processes than the one serving
``/metrics`` (``--pool N``: RQ's ``WorkerPool`` forks N workers; ``--fork``: a work horse per
job), ``served`` switches ``prometheus_client`` to its multiprocess mode: each process keeps its
figures in files of a fresh directory, and the serving process adds them up at every scrape.
"""

from __future__ import annotations

import functools
import os
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    start_http_server,
    values,
)
from prometheus_client.multiprocess import MultiProcessCollector

BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
MULTIPROC_DIR = "PROMETHEUS_MULTIPROC_DIR"


class JobMetrics:
    """The series a job adds to: ``outcome`` is done, failed or skipped; ``code`` the error or
    skip code ("" for none), a label of its own so that both can be summed over."""

    def __init__(self, registry: CollectorRegistry | None = REGISTRY) -> None:
        self.jobs = Counter(
            "compaction_jobs",
            "Compaction jobs by outcome and code",
            ["outcome", "code"],
            registry=registry,
        )
        self.duration = Histogram(
            "compaction_job_duration_seconds",
            "Time from job start to its final event",
            ["outcome"],
            buckets=BUCKETS,
            registry=registry,
        )
        self.tokens_saved = Counter(
            "compaction_tokens_saved", "Estimated tokens removed by compactions", registry=registry
        )
        # The receipts (docs/architecture.md, "Receipt"): what the auxiliary model read and
        # wrote, what it cost, and how many exact identifiers of the compacted spans survived.
        self.aux_tokens = Counter(
            "compaction_aux_tokens",
            "Auxiliary model tokens of applied stages, from the provider's usage",
            ["direction"],
            registry=registry,
        )
        self.cost = Counter(
            "compaction_cost_usd",
            "Cost of applied stages at the channels' prices",
            registry=registry,
        )
        self.identifiers = Counter(
            "compaction_identifiers",
            "Exact identifiers of compacted spans, and those the results kept",
            ["outcome"],
            registry=registry,
        )

    def record(self, outcome: str, code: str, seconds: float, tokens_saved: int = 0) -> None:
        self.jobs.labels(outcome, code).inc()
        self.duration.labels(outcome).observe(seconds)
        if tokens_saved > 0:
            self.tokens_saved.inc(tokens_saved)

    def record_receipt(
        self, kept: int, total: int, input_tokens: int, output_tokens: int, cost: float | None
    ) -> None:
        self.identifiers.labels("kept").inc(kept)
        self.identifiers.labels("total").inc(total)
        self.aux_tokens.labels("input").inc(input_tokens)
        self.aux_tokens.labels("output").inc(output_tokens)
        if cost:
            self.cost.inc(cost)


@functools.cache
def job_metrics() -> JobMetrics:
    """Made at the first job, in the process that runs it: after ``served`` chose how values
    are kept."""
    return JobMetrics()


def record(outcome: str, code: str, seconds: float, tokens_saved: int = 0) -> None:
    job_metrics().record(outcome, code, seconds, tokens_saved)


def record_receipt(
    kept: int, total: int, input_tokens: int, output_tokens: int, cost: float | None
) -> None:
    job_metrics().record_receipt(kept, total, input_tokens, output_tokens, cost)


def _process_id() -> str:
    """Whose files a process writes. A forking worker's work horses, one at a time, share their
    worker's (RQ names it in ``RQ_WORKER_ID`` when it forks one): files per horse would pile up,
    two a job, and every scrape reads them all."""
    return os.environ.get("RQ_WORKER_ID") or str(os.getpid())


@contextmanager
def served(port: int | None, *, several_processes: bool) -> Iterator[None]:
    """Serve ``/metrics`` on ``port`` (when given) while the block runs; with
    ``several_processes``, the sums over every process forked inside the block."""
    if not port:
        yield
        return
    with ExitStack() as stack:
        registry = stack.enter_context(_multiprocess()) if several_processes else REGISTRY
        server, _thread = start_http_server(port, registry=registry)
        stack.callback(server.shutdown)
        yield


@contextmanager
def _multiprocess() -> Iterator[CollectorRegistry]:
    """prometheus_client's multiprocess mode over a fresh directory, removed afterwards."""
    previous = values.ValueClass
    with tempfile.TemporaryDirectory(prefix="compaction-metrics-") as directory:
        # The value class is chosen when prometheus_client is imported, before this process
        # knew the directory; no metric exists yet (``job_metrics`` makes them at the first job).
        os.environ[MULTIPROC_DIR] = directory
        values.ValueClass = values.MultiProcessValue(_process_id)  # type: ignore[no-untyped-call]
        try:
            registry = CollectorRegistry()
            MultiProcessCollector(registry, path=directory)  # type: ignore[no-untyped-call]
            yield registry
        finally:
            values.ValueClass = previous
            del os.environ[MULTIPROC_DIR]
