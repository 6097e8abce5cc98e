"""The private internals of rq and httpx2 that the project overrides or reads, checked as the
installed versions have them: pyproject.toml bounds each package to the versions checked here,
and an upgrade that changes one fails here, naming the file to review, before a job or a
request meets the change.

- ``worker/rq_guard.py``: ``CompactionJob`` overrides ``Job.restore`` and ``Job.func`` and
  clears the callback, webhook, retry and repeat attributes that ``restore`` sets;
  ``CompactionQueue`` sets ``Queue.job_class``; ``ForkingWorker`` overrides
  ``Worker.handle_work_horse_killed``.
- ``compaction/embedded.py``: ``ThreadWorker``, a ``SimpleWorker`` on a thread, overrides
  ``_install_signal_handlers`` and sets ``death_penalty_class``.
- ``worker/llm/deadline.py``: ``DeadlineClient`` overrides ``httpx2.Client._init_transport`` and
  ``_init_proxy_transport``, ``DeadlineTransport`` wraps its pool's ``_network_backend``, and a
  filter on the request loggers of httpx2 and of the SDKs' ``_base_client`` masks their URLs.
"""

from __future__ import annotations

import contextvars
import importlib
import inspect
import logging
import secrets
import socket
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import version
from typing import Any

import fakeredis
import httpcore2
import httpx2
import pytest
from rq import Callback, Queue, Repeat, Retry, SimpleWorker, Webhook, Worker
from rq.job import Job
from rq.serializers import JSONSerializer
from rq.timeouts import TimerDeathPenalty

from compaction.worker.llm.deadline import DeadlineClient, DeadlineTransport

RQ_GUARD = "worker/rq_guard.py"
EMBEDDED = "compaction/embedded.py"
DEADLINE = "worker/llm/deadline.py"


def changed(package: str, what: str, patch: str) -> str:
    """The failure message: what moved, who relies on it, what to do."""
    return (
        f"{package} {version(package)} changed {what}, which {patch}: review it, "
        "then raise the bound in pyproject.toml"
    )


def parameters(function: Callable[..., Any]) -> list[str]:
    return list(inspect.signature(function).parameters)


def calls(function: Callable[..., Any], name: str) -> bool:
    """Whether ``function``'s own code reads the attribute ``name`` (calls it, say)."""
    return name in function.__code__.co_names


def double(number: int) -> int:
    """The job the thread worker runs."""
    return 2 * number


def queue_on_fakeredis(queue_class: type[Queue] = Queue) -> Queue:
    name = f"test-patched-{secrets.token_hex(4)}"
    return queue_class(name, connection=fakeredis.FakeRedis(), serializer=JSONSerializer)


# --- rq: worker/rq_guard.py -------------------------------------------------------------------


class _ReadJob(Job):
    """``CompactionJob``'s shape: a job class a queue hands out."""


class _ReadQueue(Queue):
    job_class = _ReadJob


def test_rq_restore_sets_the_attributes_the_guard_clears() -> None:
    assert parameters(Job.restore) == ["self", "raw_data"], changed(
        "rq", "Job.restore(raw_data)", f"{RQ_GUARD} overrides"
    )
    queue = queue_on_fakeredis(_ReadQueue)
    hook = Webhook("https://example.invalid/hook", "finished")
    function = "some.module.function"
    job = queue.enqueue_call(
        function,
        args=(1,),
        on_success=Callback("some.module.ok"),
        on_failure=Callback("some.module.failed"),
        on_stopped=Callback("some.module.stopped"),
        webhooks=[hook],
        retry=Retry(max=2),
        repeat=Repeat(times=3),
    )

    read = queue.fetch_job(job.id)
    assert isinstance(read, _ReadJob), changed("rq", "Queue.job_class", f"{RQ_GUARD} sets")
    assert (read.func_name, getattr(read, "_func_name", None)) == (function, function), changed(
        "rq", "Job._func_name", f"{RQ_GUARD} reads"
    )
    cleared = {
        "_success_callback_name": "some.module.ok",
        "_failure_callback_name": "some.module.failed",
        "_stopped_callback_name": "some.module.stopped",
        "webhooks": [hook],
        "retries_left": 2,
        "repeats_left": 3,
    }
    for name, value in cleared.items():
        assert getattr(read, name, None) == value, changed(
            "rq", f"Job.{name} (what restore reads from Redis)", f"{RQ_GUARD} clears"
        )
    # what the guard clears is what rq runs: the callbacks' names and the webhooks
    read._success_callback_name = read._failure_callback_name = None
    read._stopped_callback_name = None
    callbacks = (read.success_callback, read.failure_callback, read.stopped_callback)
    assert callbacks == (None, None, None), changed(
        "rq", "where Job reads its callbacks", f"{RQ_GUARD} clears"
    )
    assert calls(Job.send_webhooks, "webhooks"), changed(
        "rq", "where Job.send_webhooks reads its webhooks", f"{RQ_GUARD} clears"
    )


class _OwnFunction(Job):
    @property
    def func(self) -> Callable[..., Any]:
        return double


def test_rq_runs_a_job_through_its_func_property() -> None:
    assert isinstance(inspect.getattr_static(Job, "func"), property), changed(
        "rq", "Job.func", f"{RQ_GUARD} overrides"
    )
    job = _OwnFunction.create(
        "no.such.module.function",
        args=(21,),
        connection=fakeredis.FakeRedis(),
        serializer=JSONSerializer,
    )
    assert job.perform() == 42, changed("rq", "what Job.perform calls", f"{RQ_GUARD} overrides")


def test_rq_calls_the_hook_of_a_killed_work_horse() -> None:
    hook = "Worker.handle_work_horse_killed"
    assert parameters(Worker.handle_work_horse_killed) == [
        "self",
        "job",
        "retpid",
        "ret_val",
        "rusage",
    ], changed("rq", hook, f"{RQ_GUARD} overrides")
    assert calls(Worker.monitor_work_horse, "handle_work_horse_killed"), changed(
        "rq", f"who calls {hook}", f"{RQ_GUARD} overrides"
    )


# --- rq: compaction/embedded.py ---------------------------------------------------------------


class _ThreadWorker(SimpleWorker):
    """``ThreadWorker``'s two changes, counting the calls of the one it overrides."""

    death_penalty_class = TimerDeathPenalty
    skipped = 0

    def _install_signal_handlers(self) -> None:
        self.skipped += 1


def test_rq_simple_worker_runs_off_the_main_thread() -> None:
    overridden = "SimpleWorker._install_signal_handlers"
    assert parameters(SimpleWorker._install_signal_handlers) == ["self"], changed(
        "rq", overridden, f"{EMBEDDED} overrides"
    )
    assert calls(Worker.work, "_install_signal_handlers"), changed(
        "rq", f"who calls {overridden}", f"{EMBEDDED} overrides"
    )
    timer = "Worker.death_penalty_class"
    assert isinstance(inspect.getattr_static(SimpleWorker, "death_penalty_class"), type), changed(
        "rq", timer, f"{EMBEDDED} sets"
    )
    assert {"max_idle_time", "logging_level"} <= set(parameters(Worker.work)), changed(
        "rq", "Worker.work's options", f"{EMBEDDED} passes"
    )
    queue = queue_on_fakeredis()
    job = queue.enqueue(double, 21, job_timeout=30)
    worker = _ThreadWorker([queue], connection=queue.connection, serializer=JSONSerializer)

    with ThreadPoolExecutor(1) as pool:  # not the main thread: no signal handler may be set
        pool.submit(worker.work, burst=True, logging_level="WARNING").result(timeout=60)

    assert worker.skipped == 1, changed("rq", overridden, f"{EMBEDDED} overrides")
    # timed on this thread by the timer (a signal's alarm cannot be set off the main thread)
    result = job.latest_result()
    assert result is not None and result.return_value == 42, changed(
        "rq", timer, f"{EMBEDDED} sets"
    )


# --- httpx2: worker/llm/deadline.py -----------------------------------------------------------


def closed_port() -> int:
    """A loopback port nobody listens on (a connection would be refused, not time out)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_httpx2_client_builds_its_transports_with_the_overridden_factories() -> None:
    assert "transport" in parameters(httpx2.Client._init_transport), changed(
        "httpx2", "Client._init_transport", f"{DEADLINE} overrides"
    )
    assert parameters(httpx2.Client._init_proxy_transport)[:2] == ["self", "proxy"], changed(
        "httpx2", "Client._init_proxy_transport", f"{DEADLINE} overrides"
    )
    with DeadlineClient(5.0, proxy="http://127.0.0.1:9") as client:
        transports = [client._transport, *client._mounts.values()]
    assert len(transports) == 2 and all(isinstance(t, DeadlineTransport) for t in transports), (
        changed("httpx2", "how Client builds its transports", f"{DEADLINE} overrides")
    )


@pytest.mark.parametrize("through_a_proxy", [False, True])
def test_httpcore2_pools_connect_through_their_network_backend(through_a_proxy: bool) -> None:
    """An attempt with no time left: the wrapped backend fails its connection as a timeout
    before a socket is opened (a pool that ignored ``_network_backend`` would be refused)."""
    port = closed_port()
    options: dict[str, Any] = {"proxy": f"http://127.0.0.1:{port}"} if through_a_proxy else {}
    target = "http://example.invalid/" if through_a_proxy else f"http://127.0.0.1:{port}/"
    pool = getattr(httpx2.HTTPTransport(**options), "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    assert isinstance(pool, httpcore2.ConnectionPool), changed(
        "httpx2", "HTTPTransport._pool", f"{DEADLINE} wraps"
    )
    assert isinstance(backend, httpcore2.NetworkBackend), changed(
        "httpcore2", "ConnectionPool._network_backend", f"{DEADLINE} wraps"
    )
    # the deadline is the calling context's: a context of its own leaves the test's alone
    with DeadlineClient(0.0, **options) as client, pytest.raises(httpx2.TransportError) as failed:
        contextvars.Context().run(client.get, target)
    assert isinstance(failed.value, httpx2.ConnectTimeout), changed(
        "httpcore2", "ConnectionPool._network_backend", f"{DEADLINE} wraps"
    )


@pytest.mark.parametrize("module", ["anthropic._base_client", "openai._base_client"])
def test_the_sdks_log_their_requests_on_the_filtered_loggers(module: str) -> None:
    package = module.split(".")[0]
    sdk_log = getattr(importlib.import_module(module), "log", None)
    assert sdk_log is logging.getLogger(module), changed(
        package, f"the logger of {module}", f"{DEADLINE} filters"
    )


def test_httpx2_logs_a_request_with_its_url_as_an_argument(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The filter masks ``httpx2.URL`` arguments: the password of a URL is not in the line."""
    transport = httpx2.MockTransport(lambda _request: httpx2.Response(200))
    with caplog.at_level(logging.INFO, "httpx2"), httpx2.Client(transport=transport) as client:
        client.get("https://user:hunter2@example.invalid/v1")
    [record] = [r for r in caplog.records if r.name == "httpx2"]
    assert "example.invalid" in record.getMessage()
    assert "hunter2" not in record.getMessage(), changed(
        "httpx2", "the arguments of its request log", f"{DEADLINE} masks"
    )
