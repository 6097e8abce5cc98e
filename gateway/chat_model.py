"""The model a turn talks to (docs/architecture.md, "Which channel answers"): the agent's chat
channel; else the channel serving the session's model (the turn's, else the session's, else its
agent's); else the system's (``COMPACTION_CHAT_CHANNEL``); else the gateway's fallback (the
embedded mode's offline model); else ``no_chat_model``. The channel's provider's SDK makes the
call (the worker's clients, ``worker/llm``).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

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
from compaction.store import AgentSettings, ChannelConfig, Store
from compaction.store.channels import with_key
from compaction.tools import Provider, recall_tool
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

    async def reply(self, messages: Sequence[Message], *, recall: bool = False) -> Completion:
        """The model's answer; ``recall``: it is offered the recall tool (``compaction.tools``)
        and its ``tool_calls`` may ask for it."""
        ...


class SdkChatModel:
    """A channel's model; the SDK is synchronous, so the call runs in a worker thread."""

    def __init__(self, client: SdkClient) -> None:
        self.client = client
        self.name = client.model

    async def reply(self, messages: Sequence[Message], *, recall: bool = False) -> Completion:
        provider: Provider = "anthropic" if self.client.provider == "anthropic" else "openai"
        tools = [recall_tool(provider)] if recall else []
        try:
            return await asyncio.to_thread(self.client.converse, messages, MAX_REPLY_TOKENS, tools)
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

    async def reply(self, messages: Sequence[Message], *, recall: bool = False) -> Completion:
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


#: why a channel answers a session (docs/architecture.md, "Which channel answers"): the agent's
#: choice, the channel serving the session's model, the system's (``COMPACTION_CHAT_CHANNEL``),
#: or the gateway's offline model (``channel`` ``None``)
ChatSource = Literal["agent", "model", "system", "offline"]


@dataclass(frozen=True, slots=True)
class ChatChoice:
    """The channel answering a session's turns, and why; ``channel`` ``None``: the fallback."""

    channel: ChannelConfig | None
    source: ChatSource


def choose_channel(
    channels: Sequence[ChannelConfig],
    *,
    agent_channel_id: int | None,
    model: str | None,
    system: str | None,
    has_fallback: bool,
) -> ChatChoice:
    """The one rule (docs/architecture.md, "Which channel answers"): the agent's chat channel;
    else the earliest channel serving the session's model; else the channel
    ``COMPACTION_CHAT_CHANNEL`` names (by name, else id); else the fallback model; else
    ``no_chat_model``. A channel added later never displaces an earlier answer: each step
    either names one channel or takes the earliest of those serving a model."""
    by_id = {c.id: c for c in channels}
    if agent_channel_id is not None and agent_channel_id in by_id:
        return ChatChoice(by_id[agent_channel_id], "agent")
    serving = next((c for c in channels if model is not None and c.model == model), None)
    if serving is not None:
        return ChatChoice(serving, "model")
    if system:
        named = next((c for c in channels if c.name == system), None)
        named = named or next((c for c in channels if str(c.id) == system), None)
        if named is None:
            raise NoChatModel(
                f"no chat model: COMPACTION_CHAT_CHANNEL names {system!r}, which no channel is"
            )
        return ChatChoice(named, "system")
    if has_fallback:
        return ChatChoice(None, "offline")
    # the fix is each screen's own (the agent's chat channel in the console's Settings, the
    # command line's ``agent set --chat-channel``): the code says which
    raise NoChatModel(
        f"no chat model: no channel serves {model!r}, the agent has no chat channel and "
        "COMPACTION_CHAT_CHANNEL names none"
        if model
        else "no chat model: give the agent a chat channel, or set COMPACTION_CHAT_CHANNEL"
    )


class ChatModels:
    """Which model answers a session; the SDK clients are reused (warm connections)."""

    def __init__(self, settings: Settings, store: Store, fallback: ChatModel | None) -> None:
        self.settings = settings
        self.store = store
        self.fallback = fallback
        #: ``COMPACTION_CHAT_CHANNEL`` (blank: none)
        self.system = (settings.chat_channel or "").strip() or None
        self._clients: LRUCache[ClientKey, SdkClient] = LRUCache(CLIENTS)
        self._lock = threading.Lock()

    def choice(self, agent: AgentSettings | None, model: str | None) -> ChatChoice:
        """Who answers a session of ``agent`` on ``model`` (the turn's, else the session's,
        else the agent's). Blocking (it reads the channels, kept ``channel_cache_s`` seconds
        and until this store edits one): call it in a worker thread."""
        return choose_channel(
            self.store.recent_channels(self.settings.channel_cache_s),
            agent_channel_id=agent.chat_channel_id if agent is not None else None,
            model=model,
            system=self.system,
            has_fallback=self.fallback is not None,
        )

    def for_session(self, agent: AgentSettings | None, model: str | None) -> ChatModel:
        """The model ``choice`` names, its client reused. Blocking, like ``choice``."""
        channel = self.choice(agent, model).channel
        if channel is None:
            assert self.fallback is not None  # "offline" is chosen only with a fallback
            return self.fallback
        channel = with_key(
            channel, NoChatModel, key_env_pattern=self.settings.channel_key_env_pattern
        )
        key = client_key(channel)
        with self._lock:
            client = self._clients.get(key)
            if client is None:
                client = self._clients[key] = build_client(channel, self.settings)
        return SdkChatModel(client)
