"""Retries of the auxiliary model's calls (docs/architecture.md, "Settings": ``LLM_MAX_RETRIES``
counts them, ``LLM_TIMEOUT_S`` bounds each attempt): the worker's own, the SDKs' turned off.

The SDKs wait what a server's ``Retry-After`` says, as it is: a server answering "retry after
5 ms" got the attempt and its two retries within about 30 ms, and Anthropic's SDK waits as long
as asked (a day), far past the job's timeout, holding the session's lock. Here each retry waits
its backoff, exponential from ``BASE_S`` and capped at ``CAP_S``, the upper half jittered so that
workers failing together do not retry in step; a server's longer wait is honoured up to
``CAP_S``, and one past it ends the call at once (the request fails now, the session free).

Retried: what may pass (a timeout, a refused or dropped connection, 408, 409, 429 and 5xx, as
the SDKs retry). Not retried: an answer that will not change (401, 400, a malformed reply).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, TypeVar

from compaction.service import logs

if TYPE_CHECKING:
    from compaction.worker.llm.base import SdkErrors

log = logs.get_logger(__name__)
T = TypeVar("T")

#: the first retry's ceiling; each next one doubles it
BASE_S = 0.5
#: no retry waits longer, whatever the server asks
CAP_S = 8.0
#: statuses worth another attempt besides 5xx
RETRY_STATUSES = frozenset({408, 409, 429})


def backoff(retry: int, draw: Callable[[], float] = random.random) -> float:
    """The wait before retry number ``retry`` (1: the first): between half and all of
    ``BASE_S * 2**(retry - 1)``, capped at ``CAP_S``; ``draw`` in [0, 1) picks where."""
    ceiling = min(CAP_S, BASE_S * 2.0 ** (retry - 1))
    return ceiling / 2 * (1 + draw())


def retrying(
    attempt: Callable[[], T],
    *,
    retries: int,
    errors: SdkErrors,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """``attempt()``, again after each failure worth retrying, up to ``retries`` times; the
    last failure (or one not worth retrying) is raised as it came."""
    retry = 0
    while True:
        try:
            return attempt()
        except Exception as err:
            retry += 1
            wait = _wait(err, retry, retries, errors)
            if wait is None:
                raise
            # the status and the kind only: an SDK's error text may quote the provider's body
            status = getattr(err, "status_code", None)
            log.info(
                "auxiliary model retried",
                retry=retry,
                retries=retries,
                wait_s=round(wait, 3),
                error=type(err).__name__,
                status=status,
            )
            sleep(wait)


def _wait(err: Exception, retry: int, retries: int, errors: SdkErrors) -> float | None:
    """How long to wait before retry number ``retry``; None: raise ``err`` now."""
    if retry > retries or not _transient(err, errors):
        return None
    asked = server_wait(err)
    if asked is not None and asked > CAP_S:
        log.info("auxiliary model not retried", asked_s=round(asked, 1), cap_s=CAP_S)
        return None
    return max(backoff(retry), asked or 0.0)


def _transient(err: Exception, errors: SdkErrors) -> bool:
    if isinstance(err, (errors.timeout, errors.connection)):
        return True
    if isinstance(err, errors.status):
        status = getattr(err, "status_code", 0)
        return isinstance(status, int) and (status in RETRY_STATUSES or status >= 500)
    return False


def server_wait(err: Exception) -> float | None:
    """The seconds the server asked to wait (``retry-after-ms``, ``retry-after`` in seconds or
    as an HTTP date); None when it asked nothing readable."""
    headers = getattr(getattr(err, "response", None), "headers", None)
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        seconds: float | None
        try:
            seconds = float(value) / scale
        except ValueError:
            seconds = _until(value)
        if seconds is not None and math.isfinite(seconds):
            return max(0.0, seconds)
    return None


def _until(date: str) -> float | None:
    try:
        when = parsedate_to_datetime(date)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return (when - datetime.now(UTC)).total_seconds()
