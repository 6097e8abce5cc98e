"""What a gateway calls (docs/architecture.md, "Layers"): the pre-call hook (``ensure_compacted``),
the threshold check, ``/compact``, waiting for a running compaction, ``token_update`` and the event
relay. They are the methods of ``Producers`` (one object holding the resources; ``aio()`` gives
its asyncio twin, ``AsyncProducers``); the functions here call those of the ``Producers`` given to
``configure()`` (or one built from the settings), and ``producers.aio`` has their asyncio
twins."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from compaction.core.contract import AnyEvent, TokenUpdate, TokenUsage
from compaction.core.messages import Message
from compaction.producers.aio import AsyncProducers
from compaction.producers.commands import SlashCommand, parse_slash_command
from compaction.producers.context import Producers, configure, default
from compaction.producers.ensure import Ensured
from compaction.producers.relay import EventRelay
from compaction.producers.trigger import TriggerResult
from compaction.service.queue import EnqueueResult


def ensure_compacted(
    session_id: str,
    *,
    model: str | None = None,
    messages: Sequence[Message] | None = None,
    system_prompt: str | None = None,
    timeout: float = 60.0,
    wait: bool = True,
) -> Ensured:
    return default().ensure_compacted(
        session_id,
        model=model,
        messages=messages,
        system_prompt=system_prompt,
        timeout=timeout,
        wait=wait,
    )


def check_and_enqueue(
    session_id: str,
    *,
    model: str | None = None,
    messages: Sequence[Message] | None = None,
    system_prompt: str | None = None,
) -> TriggerResult:
    return default().check_and_enqueue(
        session_id, model=model, messages=messages, system_prompt=system_prompt
    )


def request_manual(
    session_id: str,
    *,
    focus: str | None = None,
    context_window: int | None = None,
    review: bool = False,
) -> EnqueueResult:
    return default().request_manual(
        session_id, focus=focus, context_window=context_window, review=review
    )


def wait_for_compaction(session_id: str, timeout: float = 60.0) -> AnyEvent | None:
    return default().wait_for_compaction(session_id, timeout)


def publish_token_update(
    session_id: str,
    *,
    model: str | None = None,
    usage: TokenUsage | Mapping[str, int] | None = None,
) -> TokenUpdate:
    return default().publish_token_update(session_id, model=model, usage=usage)


__all__ = [
    "AsyncProducers",
    "EnqueueResult",
    "Ensured",
    "EventRelay",
    "Producers",
    "SlashCommand",
    "TriggerResult",
    "check_and_enqueue",
    "configure",
    "ensure_compacted",
    "parse_slash_command",
    "publish_token_update",
    "request_manual",
    "wait_for_compaction",
]
