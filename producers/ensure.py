"""The pre-call hook (docs/architecture.md, "The job"): the threshold check before a model call,
and the wait that gives the turn crossing the threshold (or the first turn after a switch to a
smaller model) the compacted view rather than the overflowing one.

Split in steps so that ``producers.aio`` composes the same ones around its own wait.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from compaction.core.contract import AnyEvent
from compaction.core.messages import Message
from compaction.core.tokens import estimate_messages_tokens
from compaction.producers import trigger
from compaction.producers.trigger import TriggerResult, TriggerStatus
from compaction.producers.wait import wait_for_request
from compaction.service.queue import queued_or_running
from compaction.store import SessionInfo

if TYPE_CHECKING:  # producers/context.py imports this module
    from compaction.producers.context import Producers

#: ``compacted``: it waited and the compaction was done; ``waited``: it waited and the request
#: ended without changing the history (failed or skipped: ``event`` says why); ``timed_out``:
#: ``timeout`` passed first. Otherwise it did not wait, and the status is the threshold check's.
EnsureStatus = TriggerStatus | Literal["compacted", "waited", "timed_out"]

_QUEUED: frozenset[TriggerStatus] = frozenset({"enqueued", "already_pending", "in_flight"})


@dataclass(frozen=True, slots=True)
class Ensured:
    """What ``ensure_compacted`` found, and what the gateway sends to the model."""

    status: EnsureStatus
    #: the threshold check, before any wait
    trigger: TriggerResult
    #: the final event of the request it waited for; ``None`` when it did not wait or timed out
    event: AnyEvent | None
    #: the compacted view after a compaction; else the messages the gateway passed, else the
    #: compacted view as stored
    messages: list[Message]
    #: the estimate of ``messages`` (and the system prompt), once the call returns
    used_tokens: int


def awaited_request(
    ctx: Producers, session_id: str, checked: TriggerResult, *, wait: bool
) -> str | None:
    """The request the next model call waits for, if any. With ``wait``: one queued or running
    for the session, whatever its size (a message sent while a compaction runs waits for it);
    without: one only when the call would not fit the window."""
    limit = checked.threshold_tokens if wait else checked.max_tokens
    if checked.status in _QUEUED:
        return checked.request_id if checked.used_tokens >= limit else None
    if wait and checked.status == "below_threshold":
        return queued_or_running(ctx.redis, ctx.settings.channel_prefix, session_id)
    return None


def settle(
    ctx: Producers,
    session_id: str,
    checked: TriggerResult,
    *,
    event: AnyEvent | None,
    waited: bool,
    messages: Sequence[Message] | None,
    system_prompt: str | None,
) -> Ensured:
    """``Ensured`` after the check (``waited=False``), the final ``event`` of the request it
    waited for, or a timeout (``waited=True``, no event)."""
    if event is not None and event.type == "compaction_done":
        view = trigger.model_view(ctx, session_id)
        used = estimate_messages_tokens(view, ctx.estimator) + trigger.prompt_tokens(
            ctx, system_prompt
        )
        return Ensured("compacted", checked, event, view, used)
    status: EnsureStatus = checked.status
    if waited:
        status = "timed_out" if event is None else "waited"
    listed = list(messages) if messages is not None else trigger.model_view(ctx, session_id)
    return Ensured(status, checked, event, listed, checked.used_tokens)


def ensure_compacted(
    ctx: Producers,
    session_id: str,
    *,
    model: str | None = None,
    messages: Sequence[Message] | None = None,
    system_prompt: str | None = None,
    timeout: float = 60.0,
    wait: bool = True,
    info: SessionInfo | None = None,
) -> Ensured:
    """Check, enqueue when needed, wait when the session is over its threshold (``wait``) or
    over its window (always), and return what to send. A timeout is ``timed_out``, not an
    error: the gateway sends the uncompacted messages. ``info``: as ``check_and_enqueue``'s."""
    checked = trigger.check_and_enqueue(
        ctx, session_id, model=model, messages=messages, system_prompt=system_prompt, info=info
    )
    request_id = awaited_request(ctx, session_id, checked, wait=wait)
    event: AnyEvent | None = None
    if request_id is not None:
        try:
            event = wait_for_request(ctx, session_id, request_id, timeout)
        except TimeoutError:
            event = None
    return settle(
        ctx,
        session_id,
        checked,
        event=event,
        waited=request_id is not None,
        messages=messages,
        system_prompt=system_prompt,
    )
