"""What an RQ worker takes from Redis (docs/architecture.md, "The job"): whoever can write to
Redis can enqueue any job, so the worker runs nothing but the job function.

``CompactionJob`` is the job class of every ``compaction worker`` (simple, forking, pool): a job
naming another function, or an instance, extra arguments, callbacks, webhooks, retries or
repeats (none of which this project's producers set) is refused before anything is imported or
called, fails with its reason logged, and the worker goes on. Callbacks and webhooks are dropped
as the job is read, so not even RQ's failure path imports a callback or posts a webhook. The job
runs under the worker's own timeout (``Settings.rq_timeout_s``: ``COMPACTION_JOB_TIMEOUT_S``
after ``COMPACTION_MANUAL_LOCK_WAIT_S``), whatever the producer asked for.

A job whose process died is answered here as ``worker_lost`` (``worker.inflight``): when RQ's
maintenance finds it abandoned, or a forking worker's work horse dies.
"""

from __future__ import annotations

from collections.abc import Callable
from resource import struct_rusage
from types import TracebackType
from typing import Any

from pydantic import ValidationError
from rq import Queue, Worker
from rq.exceptions import AbandonedJobError, DeserializationError
from rq.job import Job
from rq.serializers import JSONSerializer

from compaction.core.contract import CompactionRequested
from compaction.service import logs
from compaction.service.keys import JOB_FUNCTION, JOB_FUNCTIONS
from compaction.worker import inflight
from compaction.worker.jobs import compaction_requested
from compaction.worker.runtime import current

log = logs.get_logger("compaction.worker")


class RefusedJob(Exception):
    """A job that is not the project's job function, or asks RQ for more than running it."""


class CompactionJob(Job):
    _refusal: str | None = None

    def restore(self, raw_data: Any) -> None:
        super().restore(raw_data)
        self._refusal = _refusal(self)
        # Read from Redis, these name code to import and URLs to call: never act on them.
        self._success_callback_name = self._failure_callback_name = None
        self._stopped_callback_name = None
        self.webhooks = []
        self.retries_left = self.repeats_left = None
        self.timeout = current().settings.rq_timeout_s

    @property
    def func(self) -> Callable[..., Any]:
        """The job function itself: never imported by the name the job gives."""
        if self._refusal is not None:
            name = self._func_name if isinstance(self._func_name, str) else "?"
            log.error("job refused", job=self.id, function=name[:200], reason=self._refusal)
            raise RefusedJob(f"refused: {self._refusal}")
        return compaction_requested


def _refusal(job: Job) -> str | None:
    """Why ``job`` is not a job of this project's producers, or None."""
    try:
        name, instance, args, kwargs = job.func_name, job.instance, job.args, job.kwargs
    except DeserializationError:
        return "its data is not a JSON job"
    if name not in JOB_FUNCTIONS or instance is not None:
        return f"it calls {str(name)[:200]!r}; only {JOB_FUNCTION} runs"
    if kwargs or len(args) != 1:
        return "the job function takes the request, alone"
    extras = {
        "callbacks": job._success_callback_name
        or job._failure_callback_name
        or job._stopped_callback_name,
        "webhooks": job.webhooks,
        "retries": job.retries_left,
        "repeats": job.repeats_left,
    }
    asked = [what for what, value in extras.items() if value]
    return f"it asks for {', '.join(asked)}" if asked else None


class CompactionQueue(Queue):
    """Jobs read through a queue (RQ's maintenance of its registries) are ``CompactionJob``s."""

    job_class = CompactionJob


def report_abandoned(
    job: Job,
    exc_type: type[BaseException] | None,
    _exc: BaseException | None,
    _tb: TracebackType | None,
) -> None:
    """RQ's exception handler: RQ's maintenance found ``job`` abandoned (its worker stopped
    beating), so it is answered as ``worker_lost``."""
    if exc_type is not None and issubclass(exc_type, AbandonedJobError):
        report_dead(job)


def report_dead(job: Job) -> None:
    """``job``'s process is dead: answer its request unless someone already did."""
    try:
        if job.func_name not in JOB_FUNCTIONS or not job.args:
            return
        request = CompactionRequested.model_validate(job.args[0])
    except (DeserializationError, ValidationError):
        return
    runtime = current()
    try:
        lost = inflight.claim(runtime, request.session_id, request.request_id)
        if lost is not None:
            inflight.report_lost(runtime, lost)
    except Exception as err:  # RQ's bookkeeping goes on whatever happens here
        log.exception("lost request not answered", job=job.id, error=str(err)[:300])


class ForkingWorker(Worker):
    """RQ's forking ``Worker``; a work horse that dies mid-job has its request answered."""

    def handle_work_horse_killed(
        self, job: Job, retpid: int, ret_val: int, rusage: struct_rusage
    ) -> None:
        super().handle_work_horse_killed(job, retpid, ret_val, rusage)  # type: ignore[no-untyped-call]
        report_dead(job)


#: what every ``compaction worker`` gives RQ, a pool's workers included
WORKER_OPTIONS: dict[str, Any] = {
    "serializer": JSONSerializer,
    "job_class": CompactionJob,
    "queue_class": CompactionQueue,
    "exception_handlers": [report_abandoned],
}
