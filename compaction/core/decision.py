"""Whether a request compacts, and which stage it starts with (docs/architecture.md, "The job",
phases of a run, step 4): the one rule the producers' threshold check and the worker both ask,
so that a request the producers queue is one the worker runs.

The facts that cost a read (the queue, the run history, the compacted view) are passed as
functions and asked only when the rules before them did not decide, in the order below: the
producers' check stays one Redis read when a request is queued, and none below the threshold.
The ``COMPACTION_ENABLED`` switch is read before (it refuses even before the worker's lock),
and so is the producers' system prompt check.

The agent's ``autoCompact`` mode (docs/architecture.md, "The gate") is the producers' to pass:
``ask`` and ``off`` hold an auto request over the threshold (``asked``, ``manual_only``) unless
the call would not fit the window (``compaction.core.gate.hard_limit_reached``). The worker
runs what was queued: it passes no mode.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, overload

from compaction.core.contract import AutoCompact, Reason, Stage
from compaction.core.gate import hard_limit_reached

#: a request queued or running for the session already (the producers' check; the worker asks
#: under the session's lock, where none is)
Busy = Literal["already_pending", "in_flight"]
#: why a request stops before anything is announced, whatever else is queued (skip codes)
Skip = Literal["below_threshold", "suppressed", "nothing_to_compact"]
#: an auto request over the threshold that the agent's mode holds back: ``ask`` asks the user
#: (the ``token_update``'s warning is ``due``), ``off`` waits for ``/compact``
Held = Literal["asked", "manual_only"]
_HELD: dict[AutoCompact, Held] = {"ask": "asked", "off": "manual_only"}


def _nothing_busy() -> Busy | None:
    return None


@overload
def decide(
    reason: Reason,
    tokens: int,
    threshold_tokens: int,
    *,
    suppressed: Callable[[], bool],
    first_stage: Callable[[], Stage | None],
) -> Stage | Skip: ...


@overload
def decide(
    reason: Reason,
    tokens: int,
    threshold_tokens: int,
    *,
    suppressed: Callable[[], bool],
    first_stage: Callable[[], Stage | None],
    busy: Callable[[], Busy | None],
    mode: AutoCompact = "on",
    window: int | None = None,
) -> Stage | Skip | Busy | Held: ...


def decide(
    reason: Reason,
    tokens: int,
    threshold_tokens: int,
    *,
    suppressed: Callable[[], bool],
    first_stage: Callable[[], Stage | None],
    busy: Callable[[], Busy | None] = _nothing_busy,
    mode: AutoCompact = "on",
    window: int | None = None,
) -> Stage | Skip | Busy | Held:
    """The stage a request of a session at ``tokens`` starts with, or why it stops.

    An auto request stops under the threshold, behind a request already queued or running (the
    turn waits for it), when the agent's ``mode`` holds it (``ask``/``off``, unless the call
    would not fit the model's ``window``: the hard limit) and under the anti-loop rule
    (``suppressed``); a manual one always runs (docs/architecture.md, "The algorithm",
    "Anti-loop"; "The gate"). Either stops with ``nothing_to_compact`` when neither segment
    has anything to summarize (``first_stage`` answers ``None``): the worker answers an auto
    request's with ``compaction_skipped`` and a manual one's with ``compaction_failed``."""
    if reason == "auto":
        if tokens < threshold_tokens:
            return "below_threshold"
        queued = busy()
        if queued is not None:
            return queued
        if mode != "on" and (window is None or not hard_limit_reached(tokens, window)):
            return _HELD[mode]
        if suppressed():
            return "suppressed"
    stage = first_stage()
    return "nothing_to_compact" if stage is None else stage
