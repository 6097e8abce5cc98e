"""The model a turn talks to (docs/architecture.md, "The gateway"): the session's model (the
turn's, else the session's, else its agent's) names a channel, whose provider's SDK makes the
call (the worker's clients, ``worker/llm``); without one, the first channel that does not only
write summaries; else the gateway's fallback (the embedded mode's offline model); else
``no_chat_model``.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Protocol

from cachetools import LRUCache

from compaction.core.errors import LlmTimeout, NoChatModel, ReplyTooLong
from compaction.core.messages import Message
from compaction.core.tokens import (
    TextEstimator,
    estimate_messages_tokens,
    estimate_tokens,
    text_estimator,
)
from compaction.service.settings import Settings
from compaction.store import ChannelConfig, Store
from compaction.store.channels import with_key
from compaction.worker.llm import ClientKey, Completion, SdkClient, build_client, client_key

#: the longest reply a turn asks for
MAX_REPLY_TOKENS = 4_096
#: the longest reply a turn stores (estimated tokens): what it asks for, with a margin for the
#: estimate (chars / 4 is short of a real tokenizer's count on code); past it, ``reply_too_long``
STORED_REPLY_TOKENS = 2 * MAX_REPLY_TOKENS
#: clients kept warm (one per channel configuration; an edited channel gets a new one)
CLIENTS = 32
#: how much of the user's words the offline model quotes
QUOTE_CHARS = 200


class ChatModel(Protocol):
    #: the model's name, for logs and errors
    name: str

    async def reply(self, messages: Sequence[Message]) -> Completion: ...


class SdkChatModel:
    """A channel's model; the SDK is synchronous, so the call runs in a worker thread."""

    def __init__(self, client: SdkClient) -> None:
        self.client = client
        self.name = client.model

    async def reply(self, messages: Sequence[Message]) -> Completion:
        try:
            return await asyncio.to_thread(self.client.converse, messages, MAX_REPLY_TOKENS)
        except LlmTimeout:
            # the clients' own wording names the auxiliary model
            raise LlmTimeout(f"{self.client.provider}: the chat model timed out") from None


class OfflineChatModel:
    """Answers without a network (the embedded mode, where no channel is configured): an
    acknowledgement quoting the user's last words, the same every time. Its usage is the
    estimate of what it read and wrote."""

    name = "offline"

    def __init__(self, estimator: TextEstimator | None = None) -> None:
        self.estimator = estimator or text_estimator()

    async def reply(self, messages: Sequence[Message]) -> Completion:
        said = next((m.content for m in reversed(messages) if m.role == "user"), "")
        words = " ".join(said.split())
        quote = words[:QUOTE_CHARS] + ("…" if len(words) > QUOTE_CHARS else "")
        text = f"(offline model) You said: “{quote}”. Configure a channel to talk to a real model."
        answer = Message(role="assistant", content=text)
        return Completion(
            text,
            estimate_messages_tokens(messages, self.estimator),
            estimate_tokens(answer, self.estimator),
        )


def storable(completion: Completion, estimator: TextEstimator) -> Completion:
    """``completion``, unless its reply is past ``STORED_REPLY_TOKENS`` (a provider or proxy
    that ignores the maximum): stored, such a reply is sent to every socket and fills the
    session's window, so that every later compaction fails (docs/architecture.md, "The
    gateway")."""
    tokens = estimator(completion.text)
    if tokens > STORED_REPLY_TOKENS:
        raise ReplyTooLong(
            f"the chat model replied ~{tokens} tokens, past the {STORED_REPLY_TOKENS} a turn "
            f"stores (it asks for {MAX_REPLY_TOKENS} at most): the reply was not stored"
        )
    return completion


def pick_channel(channels: Sequence[ChannelConfig], model: str | None) -> ChannelConfig | None:
    """The channel serving ``model``, else the first one for conversation (not auxiliary)."""
    if model is not None:
        for channel in channels:
            if channel.model == model:
                return channel
    return next((c for c in channels if not c.is_auxiliary), None)


class ChatModels:
    """Which model answers a session; the SDK clients are reused (warm connections)."""

    def __init__(self, settings: Settings, store: Store, fallback: ChatModel | None) -> None:
        self.settings = settings
        self.store = store
        self.fallback = fallback
        self._clients: LRUCache[ClientKey, SdkClient] = LRUCache(CLIENTS)
        self._lock = threading.Lock()

    def for_model(self, model: str | None) -> ChatModel:
        """Blocking (it reads the channels): call it in a worker thread."""
        channel = pick_channel(self.store.list_channels(), model)
        if channel is None:
            if self.fallback is not None:
                return self.fallback
            # the fix is each screen's own (the console's Settings, the command line's
            # ``channel add``): the code says which
            raise NoChatModel(
                f"no chat model: no channel serves {model!r} and none is there for conversation"
                if model
                else "no chat model: add a channel"
            )
        channel = with_key(
            channel, NoChatModel, key_env_pattern=self.settings.channel_key_env_pattern
        )
        key = client_key(channel)
        with self._lock:
            client = self._clients.get(key)
            if client is None:
                client = self._clients[key] = build_client(channel, self.settings)
        return SdkChatModel(client)
