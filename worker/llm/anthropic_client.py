"""Anthropic Messages API client (``/v1/messages``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import anthropic

from compaction.core.formats import to_anthropic
from compaction.core.messages import Message, ToolCall
from compaction.worker.llm.base import (
    ClientOptions,
    Completion,
    SdkClient,
    SdkErrors,
    as_wire,
    count_of,
    malformed,
    text_of,
)
from compaction.worker.llm.rules import anthropic_arguments


class AnthropicClient(SdkClient):
    provider = "anthropic"
    errors = SdkErrors(
        anthropic.APITimeoutError,
        anthropic.APIStatusError,
        anthropic.APIError,
        anthropic.APIConnectionError,
    )

    def __init__(self, options: ClientOptions) -> None:
        super().__init__(options)
        # Built once per process and reused: the SDK keeps the HTTP connection pool.
        self._client = anthropic.Anthropic(**options.sdk_kwargs(missing_key=""))

    def attempt(
        self,
        messages: Sequence[Message],
        max_tokens: int,
        tools: Sequence[dict[str, Any]] = (),
    ) -> Completion:
        arguments: dict[str, Any] = anthropic_arguments(
            self.model, max_tokens, temperature=self.temperature, thinking=self.thinking
        )
        # Anthropic takes the system prompt beside the messages, not among them.
        system, turns = to_anthropic(messages)
        if system:
            arguments["system"] = system
        if tools:
            arguments["tools"] = list(tools)
        reply = self._client.messages.create(model=self.model, **as_wire(turns, arguments))
        return completion(reply)


def completion(reply: object) -> Completion:
    """The text and usage of a ``messages.create`` reply, checked: the SDK hands over whatever
    JSON came back (or the body as text when it was no JSON)."""
    provider = AnthropicClient.provider
    if not isinstance(reply, anthropic.types.Message):
        raise malformed(provider, f"not a message ({type(reply).__name__})")
    blocks = reply.content
    if not isinstance(blocks, list):
        raise malformed(provider, "no content")
    text = "".join(
        text_of(getattr(block, "text", None), provider)
        for block in blocks
        if getattr(block, "type", None) == "text"
    )
    usage = reply.usage
    calls = tuple(
        ToolCall(id=block.id, name=block.name, arguments=json.dumps(block.input))
        for block in blocks
        if isinstance(block, anthropic.types.ToolUseBlock)
    )
    return Completion(
        text,
        count_of(getattr(usage, "input_tokens", None)),
        count_of(getattr(usage, "output_tokens", None)),
        calls,
    )
