"""One turn of a conversation through the gateway (docs/architecture.md, "The gateway"): the
user's message is stored, the pre-call check runs (``AsyncProducers.ensure_compacted``, which
waits while a compaction of the session is queued or running, so a message sent meanwhile is
answered from the compacted view), the chat model answers, its reply is stored with the
call's tokens per segment and the pre-call decision (``producers.stats.turn_stat``, one
transaction) and ``token_update`` carries its usage. Both stored messages go to every client
of the session, on every gateway (the hub).

One turn of a session at a time, whichever gateway process takes it: the turn holds
``<prefix>:turn:<sessionId>`` in Redis (redis-py's ``Lock``, renewed while it runs); a turn
that finds it held is refused with ``busy``. A turn that is refused (``busy``, Redis down, no
chat model, the session unknown, a system prompt over the threshold) stores nothing: every
refusal comes before the user's message is stored. One that fails afterwards (the model call
fails, times out or replies past the cap: ``reply_too_long``, nothing of that reply stored)
keeps the user's message, without a reply.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from redis.exceptions import RedisError
from redis.lock import Lock

from compaction.core.contract import TokenUsage
from compaction.core.errors import Busy
from compaction.core.messages import Message
from compaction.gateway.chat_model import ChatModel, ChatModels, storable
from compaction.gateway.hub import Delivery, Hub
from compaction.gateway.responses import EnsuredFigures, HistoryRow, Turn
from compaction.producers import stats, trigger
from compaction.producers.context import Producers
from compaction.producers.ensure import Ensured
from compaction.producers.views import history_rows
from compaction.service import logs
from compaction.service.keys import turn_key
from compaction.store import SessionInfo, StoredMessage
from compaction.store.token_stats import TokenStat
from compaction.tools import run_tool_call
from compaction.worker.llm import Completion

log = logs.get_logger(__name__)

#: a turn's hold on its session lasts this long past its last renewal (a third of it): a
#: gateway that dies mid-turn frees the session within it
TURN_TTL_S = 30.0
#: the most times a turn asks the model again after it called the recall tool
MAX_TOOL_ROUNDS = 3


@dataclass(frozen=True, slots=True)
class Stored:
    """A message the turn stored: its history row, the session's row as the append left it,
    and what its clients are sent."""

    row: HistoryRow
    info: SessionInfo
    delivery: Delivery


@dataclass(frozen=True, slots=True)
class TurnResult:
    #: the stored reply, as a history row
    reply: HistoryRow
    ensured: Ensured
    usage: TokenUsage

    def answer(self) -> Turn:
        ensured = EnsuredFigures(status=self.ensured.status, used_tokens=self.ensured.used_tokens)
        return Turn(reply=self.reply, ensured=ensured, usage=self.usage)


@dataclass(eq=False)
class SocketTurn:
    """A socket's turn (docs/architecture.md, "Sockets"): one at a time per socket. When the
    socket closes, a turn that has not called the model yet (waiting for a compaction) is
    cancelled; one whose model call has begun ends, and its reply is stored for the session's
    other clients and the next reload."""

    task: asyncio.Task[None] | None = None
    #: set when the model call begins
    answering: bool = False
    #: set as its reply is shown (stored): what is left (the turn's figures) takes milliseconds
    replied: bool = False

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    def abandon(self) -> None:
        """Its socket closed."""
        if self.task is not None and not self.answering:
            self.task.cancel()


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
        self._background: set[asyncio.Task[None]] = set()

    async def take(
        self,
        session_id: str,
        content: str,
        *,
        model: str | None = None,
        socket: SocketTurn | None = None,
    ) -> TurnResult:
        """The turn; ``busy`` while another of the session runs, here or on another gateway."""
        async with self._hold(session_id):
            return await self._turn(session_id, content, model, socket)

    def start(
        self,
        session_id: str,
        content: str,
        *,
        model: str | None,
        on_error: Callable[[Exception], None],
    ) -> SocketTurn:
        """The turn as a task of its own (a socket's message; ``SocketTurn`` says what its
        socket closing does); a failure goes to ``on_error(err)``."""
        socket = SocketTurn()

        async def run() -> None:
            try:
                await self.take(session_id, content, model=model, socket=socket)
            except Exception as err:
                on_error(err)

        socket.task = asyncio.create_task(run(), name=f"turn-{session_id}")
        self._background.add(socket.task)
        socket.task.add_done_callback(self._background.discard)
        return socket

    async def stop(self) -> None:
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)

    async def _turn(
        self, session_id: str, content: str, model: str | None, socket: SocketTurn | None
    ) -> TurnResult:
        message = Message(role="user", content=content)
        chat_model, asked = await asyncio.to_thread(self._begin, session_id, model, message)
        self.hub.deliver_here(session_id, asked.delivery)
        # the check goes on from the row the append returned: no read of it, nor of the message
        # (docs/benchmarks.md, "Overheads")
        ensured = await self.aio.ensure_compacted(
            session_id,
            model=model,
            timeout=self.wait_s,
            waiter=self.hub.wait_for_request,
            info=asked.info,
        )
        if socket is not None:
            socket.answering = True
        completion, usage = await self._answer(session_id, chat_model, ensured.messages)
        answer = Message(role="assistant", content=completion.text)
        reply = await asyncio.to_thread(
            self._store_reply, session_id, answer, ensured, usage, chat_model.name
        )
        if socket is not None:  # before it is shown: a client may answer it at once
            socket.replied = True
        self.hub.deliver_here(session_id, reply.delivery)
        await asyncio.to_thread(
            self.ctx.publish_token_update, session_id, model=model, usage=usage, info=reply.info
        )
        return TurnResult(reply.row, ensured, usage)

    def _store_reply(
        self,
        session_id: str,
        answer: Message,
        ensured: Ensured,
        usage: TokenUsage,
        answered_by: str,
    ) -> Stored:
        """The reply and the turn's token record (``stats.turn_stat``), one transaction: one
        commit less on every turn (docs/benchmarks.md, "Overheads")."""
        stat = stats.turn_stat(self.ctx, session_id, ensured, usage, answered_by)
        stored = self._store(session_id, answer, stat)
        stats.log_decision(stat)
        return stored

    async def _answer(
        self, session_id: str, chat_model: ChatModel, context: Sequence[Message]
    ) -> tuple[Completion, TokenUsage]:
        """The model's final answer and the usage of every call: while it calls the recall
        tool (docs/architecture.md, "Recall"), its call and the tool's answer (from the
        database) are stored as history and it is asked again, ``MAX_TOOL_ROUNDS`` times at
        most (the last time without the tool, so that it answers in words)."""
        messages = list(context)
        calls = tokens_in = tokens_out = 0
        while True:
            recall = calls < MAX_TOOL_ROUNDS
            completion = await chat_model.reply(messages, recall=recall)
            completion = storable(completion, self.ctx.estimator)
            calls, tokens_in = calls + 1, tokens_in + completion.input_tokens
            tokens_out += completion.output_tokens
            if not (recall and completion.tool_calls):
                break
            messages += await self._recall(session_id, completion)
        usage = TokenUsage(
            input_tokens=tokens_in,
            output_tokens=tokens_out,
            total_tokens=tokens_in + tokens_out,
            api_calls=calls,
        )
        return completion, usage

    async def _recall(self, session_id: str, completion: Completion) -> list[Message]:
        """The model's tool call and the tool's answers, stored and shown like any turn."""
        calls = list(completion.tool_calls)
        asked = Message(role="assistant", content=completion.text, tool_calls=calls)
        added = [asked]
        for call in calls:
            text = await asyncio.to_thread(
                run_tool_call, self.ctx, session_id, call.name, call.arguments
            )
            added.append(Message(role="tool", content=text, tool_call_id=call.id))
        for message in added:
            stored = await asyncio.to_thread(self._store, session_id, message)
            self.hub.deliver_here(session_id, stored.delivery)
        return added

    def _begin(
        self, session_id: str, model: str | None, message: Message
    ) -> tuple[ChatModel, Stored]:
        """Who answers the session's model (``session_not_found`` for an unknown session,
        ``no_chat_model``: then nothing is stored), and the user's message stored."""
        session = self.ctx.contexts.resolve(session_id, model=model)
        self.ctx.refuse_oversized(session, [message])  # docs/algorithm.md, "Bounds"
        # a system prompt no compaction can make room for: refused in the user's language,
        # before the message is stored, so that it is not left unanswered
        system = trigger.used_tokens(self.ctx, session, None, None)[1]
        trigger.refuse_system_prompt(self.ctx, session, system, [message])
        chat_model = self.models.for_session(session.agent, session.model)
        return chat_model, self._store(session_id, message)

    def _store(self, session_id: str, message: Message, stat: TokenStat | None = None) -> Stored:
        """Append ``message`` (with ``stat``, the turn's figures) and share it with the other
        gateways (``Hub.share``, in this thread); its history row is built from what was
        written (a new row is not compacted, pruned, pinned or a summary, and has no metadata)
        instead of read back. The estimates count the row now: the turn's next check reads
        nothing."""
        appended = self.ctx.store.append_positioned(session_id, [message], stat=stat)
        ((message_id, seq),) = appended.rows
        written = Message.from_trusted(
            message.role,
            message.content,
            list(message.tool_calls),
            message.tool_call_id,
            message_id,
        )
        stored = StoredMessage(written, seq, 0, datetime.now(UTC))
        self.ctx.estimates.appended(appended.session, [stored], self.ctx.estimator)
        row = HistoryRow.of(history_rows([stored])[0])
        delivery = Delivery({"type": "message", "message": row.wire()})
        self.hub.share(session_id, delivery, via=self.ctx.redis)
        return Stored(row, appended.session, delivery)

    @contextlib.asynccontextmanager
    async def _hold(self, session_id: str) -> AsyncIterator[None]:
        """The session's turn lock while the block runs (``busy`` when it is held); taken
        before anything is stored, so Redis being down refuses the turn too."""
        key = turn_key(self.ctx.settings.channel_prefix, session_id)
        lock = Lock(self.ctx.redis, key, timeout=TURN_TTL_S, blocking=False, thread_local=False)
        if not await asyncio.to_thread(lock.acquire):
            raise Busy(
                f"a turn of session {session_id!r} is already running or queued: send again "
                "once it has answered"
            )
        renewing = asyncio.create_task(_renew(lock), name=f"turn-lock-{session_id}")
        try:
            yield
        finally:
            renewing.cancel()
            await asyncio.gather(renewing, return_exceptions=True)
            await asyncio.to_thread(_release, lock)


async def _renew(lock: Lock) -> None:
    """Reset the lock's TTL every third of it while the turn runs (a compaction wait and a model
    call may each take minutes)."""
    while True:
        await asyncio.sleep(TURN_TTL_S / 3)
        try:
            await asyncio.to_thread(lock.reacquire)
        except RedisError as err:  # expired (Redis was away), or Redis is away now
            log.warning("turn lock not renewed", key=str(lock.name), error=type(err).__name__)


def _release(lock: Lock) -> None:
    with contextlib.suppress(RedisError):  # not ours any more, or Redis is away: it expires
        lock.release()
