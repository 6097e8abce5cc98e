"""The threshold check before each model call and the manual request (docs/architecture.md,
"The job")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from compaction.core import system_prompt
from compaction.core.contract import CompactionRequested, Stage
from compaction.core.decision import Busy, decide
from compaction.core.errors import CompactionDisabled, as_invalid_request
from compaction.core.messages import Message
from compaction.core.prompts import summary_language
from compaction.core.staged import first_stage
from compaction.core.tokens import estimate_tokens
from compaction.service.context import SessionContext, resolve_context
from compaction.service.queue import EnqueueResult, pending_and_running, submit
from compaction.store import SessionInfo

if TYPE_CHECKING:  # producers/context.py imports this module
    from compaction.producers.context import Producers

TriggerStatus = Literal[
    "enqueued",
    "already_pending",
    "in_flight",
    "below_threshold",
    "suppressed",
    "nothing_to_compact",
    "disabled",
    # the agent's autoCompact holds the request (docs/architecture.md, "The gate")
    "asked",
    "manual_only",
]


@dataclass(frozen=True, slots=True)
class TriggerResult:
    status: TriggerStatus
    request_id: str | None
    used_tokens: int
    max_tokens: int
    threshold_tokens: int
    threshold_percent: int
    estimated: bool = True


def used_tokens(
    ctx: Producers,
    session: SessionContext,
    messages: Sequence[Message] | None,
    system_prompt: str | None,
) -> tuple[int, int]:
    """(tokens of what goes to the model, tokens of the system prompt alone: ``system_prompt``
    and the leading system messages, passed or stored)."""
    estimate = ctx.estimator
    prompt = prompt_tokens(ctx, system_prompt)
    session_id = session.info.id
    if messages is not None:
        listed = ctx.estimates.of_messages(session_id, messages, estimate)
        leading = sum(estimate_tokens(m, estimate) for m in _leading_system(messages))
        return listed + prompt, prompt + leading
    stored, leading = ctx.estimates.of_store(
        session_id,
        session.info.compaction_version,
        session.info.last_seq,
        lambda after: ctx.store.load_history(session_id, after_seq=after),
        estimate,
    )
    return stored + prompt, prompt + leading


def resolve_written(ctx: Producers, info: SessionInfo, model: str | None) -> SessionContext:
    """The session's context from ``info``, its row as an append of the caller's just returned
    it (``Store.append_positioned``): as fresh as a read, without one (a chat turn,
    docs/benchmarks.md, "Overheads"). The agent's settings come from the contexts' cache, as a
    read's would; a row naming another agent than the cached one is read again."""
    cached = ctx.contexts.resolve(info.id, model=model, fresh=False)
    if cached.info.agent_id != info.agent_id:
        return ctx.contexts.resolve(info.id, model=model)
    return resolve_context(ctx.settings, info, cached.agent, model=model)


def prompt_tokens(ctx: Producers, system_prompt: str | None) -> int:
    """The tokens of a system prompt the gateway sends beside the messages."""
    if not system_prompt:
        return 0
    return estimate_tokens(Message(role="system", content=system_prompt), ctx.estimator)


def _leading_system(messages: Sequence[Message]) -> list[Message]:
    out = []
    for message in messages:
        if message.role != "system":
            break
        out.append(message)
    return out


def refuse_system_prompt(
    ctx: Producers, session: SessionContext, system: int, messages: Sequence[Message] | None
) -> None:
    """``system_prompt_too_large`` when the system prompt's ``system`` tokens reach the
    session's threshold, with the advice in the language of ``messages`` (else the stored
    view's), read only then (``compaction.core.system_prompt``)."""
    if system < session.threshold_tokens:
        return
    listed = messages if messages is not None else model_view(ctx, session.info.id)
    language = summary_language(ctx.settings.summary_language, listed)
    system_prompt.refuse_system_prompt(system, session.threshold_tokens, language)


def model_view(ctx: Producers, session_id: str) -> list[Message]:
    """The session's compacted view: what the model gets (docs/architecture.md, "Tables")."""
    return [stored.message for stored in ctx.store.load_history(session_id)]


def check_and_enqueue(
    ctx: Producers,
    session_id: str,
    *,
    model: str | None = None,
    messages: Sequence[Message] | None = None,
    system_prompt: str | None = None,
    info: SessionInfo | None = None,
) -> TriggerResult:
    """Enqueue an auto compaction when the session reaches its threshold and none is running,
    queued, or suppressed by the anti-loop rule. The agent's ``autoCompact`` mode ``ask`` or
    ``off`` answers ``asked`` or ``manual_only`` instead, unless the call would not fit the
    window (docs/architecture.md, "The gate"). Compaction switched off
    (``COMPACTION_ENABLED``): ``disabled``, with the figures still measured. ``info``: the
    session's row as the caller's append just left it (``resolve_written``)."""
    session = (
        ctx.contexts.resolve(session_id, model=model, fresh=messages is None)
        if info is None
        else resolve_written(ctx, info, model)
    )
    used, system = used_tokens(ctx, session, messages, system_prompt)
    threshold = session.threshold_tokens

    def result(status: TriggerStatus, request_id: str | None = None) -> TriggerResult:
        return TriggerResult(
            status, request_id, used, session.window, threshold, session.threshold_percent
        )

    if not ctx.settings.enabled:
        return result("disabled")
    refuse_system_prompt(ctx, session, system, messages)
    queue = _Queue(ctx, session_id)
    decision = decide(
        "auto",
        used,
        threshold,
        busy=queue.busy,
        suppressed=lambda: ctx.contexts.suppressed(session_id, used),
        first_stage=lambda: _first_stage(ctx, session, messages),
        mode=session.auto_compact,
        window=session.window,
    )
    if decision == "already_pending" or decision == "in_flight":
        return result(decision, queue.request_id)
    if decision != "history" and decision != "loop":
        return result(decision)
    with as_invalid_request("compaction request"):  # a model name over 128 characters
        request = CompactionRequested(
            session_id=session_id, reason="auto", model=session.model, context_window=session.window
        )
    outcome = submit(ctx.redis, ctx.settings, request)
    if outcome.status == "upgraded":  # only a manual request upgrades: never this one
        return result("already_pending", outcome.request_id)
    return result(outcome.status, outcome.request_id)


class _Queue:
    """The session's queued and running request, read once when the decision asks: one Redis
    read (``pending_and_running``) before the database's run history, the cheaper first."""

    def __init__(self, ctx: Producers, session_id: str) -> None:
        self.ctx = ctx
        self.session_id = session_id
        #: the request the answer names (the queued one, else the running one)
        self.request_id: str | None = None

    def busy(self) -> Busy | None:
        ctx = self.ctx
        pending, running = pending_and_running(
            ctx.redis, ctx.settings.channel_prefix, self.session_id
        )
        if pending is not None:
            self.request_id = pending
            return "already_pending"
        self.request_id = running
        return "in_flight" if running is not None else None


def _first_stage(
    ctx: Producers, session: SessionContext, messages: Sequence[Message] | None
) -> Stage | None:
    """A request with nothing between the protected head and the minimal tail would only
    announce a run and fail (docs/architecture.md, "The algorithm", phase 2): not enqueued."""
    config = session.config(ctx.settings)
    listed = messages if messages is not None else model_view(ctx, session.info.id)
    return first_stage(listed, config)


def request_manual(
    ctx: Producers,
    session_id: str,
    *,
    focus: str | None = None,
    context_window: int | None = None,
    review: bool = False,
) -> EnqueueResult:
    """``/compact``: always runs the whole pipeline, whatever the size (docs/architecture.md, "The
    job"); ``CompactionDisabled`` when compaction is switched off. ``review``: a draft to review
    instead of an apply (docs/architecture.md, "Review")."""
    if not ctx.settings.enabled:
        raise CompactionDisabled
    ctx.store.get_session(session_id)  # session_not_found before anything is queued
    with as_invalid_request("compaction request"):  # a focus over 2000 characters, a window...
        request = CompactionRequested(
            session_id=session_id,
            reason="manual",
            focus=focus or None,
            context_window=context_window,
            review=review,
        )
    # a system prompt no compaction can make room for: system_prompt_too_large now, not the
    # worker's nothing_to_compact later (docs/algorithm.md, "Bounds")
    session = ctx.contexts.resolve(session_id, window=context_window)
    refuse_system_prompt(ctx, session, used_tokens(ctx, session, None, None)[1], None)
    return submit(ctx.redis, ctx.settings, request)
