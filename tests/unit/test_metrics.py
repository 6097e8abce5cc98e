"""The job metrics (docs/architecture.md, "Logs and metrics"): each job adds to the series of its
``outcome`` and ``code``, two labels, in the process that ran it."""

from __future__ import annotations

from prometheus_client import REGISTRY, CollectorRegistry

from compaction.worker import metrics
from compaction.worker.metrics import JobMetrics


def sample(registry: CollectorRegistry, name: str, **labels: str) -> float:
    return registry.get_sample_value(name, labels) or 0.0


def test_record_adds_to_the_series_of_its_outcome_and_code() -> None:
    registry = CollectorRegistry()
    job_metrics = JobMetrics(registry)

    job_metrics.record("done", "", 1.5, tokens_saved=1_200)
    job_metrics.record("failed", "llm_error", 0.2)
    job_metrics.record("failed", "llm_error", 0.3)
    job_metrics.record("skipped", "lock_held", 0.01)

    jobs = {
        (s.labels["outcome"], s.labels["code"]): s.value
        for family in registry.collect()
        if family.name == "compaction_jobs"
        for s in family.samples
        if s.name == "compaction_jobs_total"
    }
    assert jobs == {("done", ""): 1, ("failed", "llm_error"): 2, ("skipped", "lock_held"): 1}
    assert sample(registry, "compaction_tokens_saved_total") == 1_200
    count = "compaction_job_duration_seconds_count"
    assert sample(registry, count, outcome="failed") == 2
    assert sample(registry, "compaction_job_duration_seconds_sum", outcome="failed") == 0.5
    bucket = "compaction_job_duration_seconds_bucket"
    assert sample(registry, bucket, outcome="done", le="1.0") == 0
    assert sample(registry, bucket, outcome="done", le="2.5") == 1
    assert sample(registry, bucket, outcome="skipped", le="0.05") == 1


def test_a_compaction_that_grew_the_context_saves_nothing() -> None:
    """A counter only goes up: a negative saving (the summary outweighed what it replaced) is
    not counted, and does not fail the job."""
    registry = CollectorRegistry()
    JobMetrics(registry).record("done", "", 2.0, tokens_saved=-40)
    assert sample(registry, "compaction_tokens_saved_total") == 0
    assert sample(registry, "compaction_jobs_total", outcome="done", code="") == 1


def test_the_module_records_in_the_process_registry() -> None:
    labels = {"outcome": "failed", "code": "test_metrics_code"}
    before = sample(REGISTRY, "compaction_jobs_total", **labels)
    tokens = sample(REGISTRY, "compaction_tokens_saved_total")

    metrics.record("failed", "test_metrics_code", 0.1, tokens_saved=7)

    assert sample(REGISTRY, "compaction_jobs_total", **labels) == before + 1
    assert sample(REGISTRY, "compaction_tokens_saved_total") == tokens + 7
