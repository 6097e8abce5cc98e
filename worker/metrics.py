"""Prometheus metrics (DESIGN §8).

RQ's forking worker runs each job in a child process, so counters kept in memory would die with
it; and a pool or several machines run many workers. Each job therefore adds its figures to
Redis hashes, and the worker's parent process serves them (``--metrics-port``): one consistent
view whichever worker ran the job.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import redis
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

log = logging.getLogger(__name__)

BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)


def _keys(prefix: str) -> tuple[str, str, str]:
    return f"{prefix}:metrics:jobs", f"{prefix}:metrics:duration", f"{prefix}:metrics:tokens"


def record(
    client: redis.Redis, prefix: str, outcome: str, seconds: float, tokens_saved: int = 0
) -> None:
    jobs, duration, tokens = _keys(prefix)
    try:
        pipe = client.pipeline(transaction=False)
        pipe.hincrby(jobs, outcome, 1)
        for bound in BUCKETS:
            if seconds <= bound:
                pipe.hincrby(duration, f"le:{bound}", 1)
        pipe.hincrby(duration, "count", 1)
        pipe.hincrbyfloat(duration, "sum", seconds)
        if tokens_saved > 0:
            pipe.hincrby(tokens, "saved", tokens_saved)
        pipe.execute()
    except redis.RedisError as err:  # metrics never fail a job
        log.warning("metrics not recorded", extra={"fields": {"error": str(err)}})


class RedisCollector(Collector):
    def __init__(self, client: redis.Redis, prefix: str) -> None:
        self.client = client
        self.prefix = prefix

    def collect(self) -> Iterator[Metric]:
        jobs_key, duration_key, tokens_key = _keys(self.prefix)
        pipe = self.client.pipeline(transaction=False)
        pipe.hgetall(jobs_key)
        pipe.hgetall(duration_key)
        pipe.hgetall(tokens_key)
        jobs, duration, tokens = pipe.execute()
        counter = CounterMetricFamily(
            "compaction_jobs", "Compaction jobs by outcome", labels=["outcome"]
        )
        for outcome, count in sorted(jobs.items()):
            counter.add_metric([outcome.decode()], int(count))
        yield counter
        fields = {k.decode(): v for k, v in duration.items()}
        yield HistogramMetricFamily(
            "compaction_job_duration_seconds",
            "Time from job start to its final event",
            buckets=[(str(b), int(fields.get(f"le:{b}", 0))) for b in BUCKETS]
            + [("+Inf", int(fields.get("count", 0)))],
            sum_value=float(fields.get("sum", 0.0)),
        )
        yield CounterMetricFamily(
            "compaction_tokens_saved",
            "Estimated tokens removed",
            value=int(tokens.get(b"saved", 0)),
        )
