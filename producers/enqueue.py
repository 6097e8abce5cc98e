"""Enqueueing compaction jobs on the RQ queue, with RQ's JSON serializer: never pickle (a pickled
job lets anyone who can write to Redis run code in the worker)."""

from __future__ import annotations

import redis
from rq import Queue
from rq.job import Job
from rq.serializers import JSONSerializer

from compaction.contract import JOB_FUNCTION, CompactionRequested


def compaction_queue(client: redis.Redis, name: str = "compaction") -> Queue:
    return Queue(name, connection=client, serializer=JSONSerializer)


def enqueue(queue: Queue, request: CompactionRequested, *, timeout_s: int) -> Job:
    """The job's id is the request id, so a request is queued at most once."""
    return queue.enqueue_call(
        JOB_FUNCTION,
        args=(request.to_wire(),),
        timeout=timeout_s,
        job_id=f"compaction-{request.request_id}",
        result_ttl=3_600,
        failure_ttl=86_400,
        description=f"compaction {request.reason} {request.session_id}",
    )
