"""One turn of a conversation through the gateway (docs/architecture.md, "The gateway"): the
user's message is stored, the pre-call check runs (``AsyncProducers.ensure_compacted``, which
waits while a compaction of the session is queued or running, so a message sent meanwhile is
answered from the compacted view), the chat model answers, its reply is stored and
``token_update`` carries its usage; the call's tokens per segment and the pre-call decision
are recorded (``Producers.record_turn``). Both stored messages go to every client of the
session on this process (the hub), and the turns of one session run one at a time in this
process.

A turn that cannot be answered (no chat model, the session unknown) stores nothing; one whose
model call fails keeps the user's message, without a reply.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from compaction.core.contract import TokenUsage
from compaction.core.messages import Message
from compaction.gateway.chat_model import ChatModel, ChatModels
from compaction.gateway.hub import Hub
from compaction.gateway.responses import EnsuredFigures, HistoryRow, Turn
from compaction.producers.context import Producers
from compaction.producers.ensure import Ensured
from compaction.producers.views import history_rows


@dataclass(frozen=True, slots=True)
class TurnResult:
    #: the stored reply, as a history row
    reply: HistoryRow
    ensured: Ensured
    usage: TokenUsage

    def answer(self) -> Turn:
        ensured = EnsuredFigures(status=self.ensured.status, used_tokens=self.ensured.used_tokens)
        return Turn(reply=self.reply, ensured=ensured, usage=self.usage)


@dataclass
class _Held:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0


class Turns:
    def __init__(self, ctx: Producers, hub: Hub, models: ChatModels) -> None:
        self.ctx = ctx
        #: its asyncio twin, which the turn awaits
        self.aio = ctx.aio()
        self.hub = hub
        self.models = models
        #: a turn waits this long for a queued or running compaction: a queued job may wait
        #: for the session's lock, then run (``Settings.rq_timeout_s``)
        self.wait_s = float(ctx.settings.rq_timeout_s)
        self._held: dict[str, _Held] = {}
        self._background: set[asyncio.Task[None]] = set()

    async def take(self, session_id: str, content: str, *, model: str | None = None) -> TurnResult:
        """The turn, after the session's earlier ones (in this process)."""
        async with self._one_at_a_time(session_id):
            return await self._turn(session_id, content, model)

    def start(
        self,
        session_id: str,
        content: str,
        *,
        model: str | None,
        on_error: Callable[[Exception], None],
    ) -> asyncio.Task[None]:
        """The turn as a task of its own (a socket's message): it ends even if the socket
        closes first; a failure goes to ``on_error(err)``."""

        async def run() -> None:
            try:
                await self.take(session_id, content, model=model)
            except Exception as err:
                on_error(err)

        task = asyncio.create_task(run(), name=f"turn-{session_id}")
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    async def stop(self) -> None:
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)

    async def _turn(self, session_id: str, content: str, model: str | None) -> TurnResult:
        message = Message(role="user", content=content)
        chat_model, asked = await asyncio.to_thread(self._begin, session_id, model, message)
        self._show(session_id, asked)
        ensured = await self.aio.ensure_compacted(
            session_id, model=model, timeout=self.wait_s, waiter=self.hub.wait_for_request
        )
        completion = await chat_model.reply(ensured.messages)
        answer = Message(role="assistant", content=completion.text)
        reply = await asyncio.to_thread(self._store, session_id, answer, asked.seq)
        self._show(session_id, reply)
        usage = TokenUsage(
            input_tokens=completion.input_tokens,
            output_tokens=completion.output_tokens,
            total_tokens=completion.input_tokens + completion.output_tokens,
            api_calls=1,
        )
        await self.aio.record_turn(session_id, ensured, usage, chat_model.name)
        await self.aio.publish_token_update(session_id, model=model, usage=usage)
        return TurnResult(reply, ensured, usage)

    def _begin(
        self, session_id: str, model: str | None, message: Message
    ) -> tuple[ChatModel, HistoryRow]:
        """Who answers the session's model (``session_not_found`` for an unknown session,
        ``no_chat_model``: then nothing is stored), and the user's message stored."""
        session = self.ctx.contexts.resolve(session_id, model=model)
        chat_model = self.models.for_model(session.model)
        return chat_model, self._store(session_id, message, session.info.last_seq)

    def _store(self, session_id: str, message: Message, after_seq: int) -> HistoryRow:
        """Append ``message``; its history row (read among the rows after ``after_seq``, a
        position the session had before: others may have appended meanwhile)."""
        store = self.ctx.store
        (message_id,) = store.append_messages(session_id, [message])
        rows = store.load_history(session_id, "full", after_seq=after_seq)
        return next(HistoryRow.of(row) for row in history_rows(rows) if row["id"] == message_id)

    def _show(self, session_id: str, row: HistoryRow) -> None:
        self.hub.publish(session_id, {"type": "message", "message": row.wire()})

    @contextlib.asynccontextmanager
    async def _one_at_a_time(self, session_id: str) -> AsyncIterator[None]:
        held = self._held.setdefault(session_id, _Held())
        held.users += 1
        try:
            async with held.lock:
                yield
        finally:
            held.users -= 1
            if held.users == 0:
                del self._held[session_id]
