"""OpenAI chat completions (``/v1/chat/completions``): OpenAI, DeepSeek and any compatible
endpoint."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import openai

from compaction.core.formats import to_openai
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
from compaction.worker.llm.rules import openai_arguments


class OpenAICompatibleClient(SdkClient):
    errors = SdkErrors(
        openai.APITimeoutError, openai.APIStatusError, openai.APIError, openai.APIConnectionError
    )

    def __init__(self, provider: str, options: ClientOptions) -> None:
        self.provider = provider
        super().__init__(options)
        self._client = openai.OpenAI(**options.sdk_kwargs(missing_key="unused"))

    def attempt(
        self,
        messages: Sequence[Message],
        max_tokens: int,
        tools: Sequence[dict[str, Any]] = (),
    ) -> Completion:
        arguments = openai_arguments(
            self.provider,
            self.model,
            max_tokens,
            temperature=self.temperature,
            thinking=self.thinking,
        )
        if tools:
            arguments["tools"] = list(tools)
        reply = self._client.chat.completions.create(
            model=self.model, **as_wire(to_openai(messages), arguments)
        )
        return completion(reply, self.provider)


def completion(reply: object, provider: str) -> Completion:
    """The text and usage of a ``chat.completions.create`` reply, checked: the SDK hands over
    whatever JSON came back (or the body as text when it was no JSON). No choice at all is no
    text, as a refusal is."""
    if not isinstance(reply, openai.types.chat.ChatCompletion):
        raise malformed(provider, f"not a chat completion ({type(reply).__name__})")
    choices = reply.choices
    if not isinstance(choices, list):
        raise malformed(provider, "no choices")
    text = ""
    if choices:
        message = getattr(choices[0], "message", None)
        if message is None:
            raise malformed(provider, "a choice without a message")
        text = text_of(getattr(message, "content", None), provider)
    usage = reply.usage
    return Completion(
        text,
        count_of(getattr(usage, "prompt_tokens", None)),
        count_of(getattr(usage, "completion_tokens", None)),
        _tool_calls(getattr(choices[0], "message", None) if choices else None),
    )


def _tool_calls(message: object) -> tuple[ToolCall, ...]:
    """The function calls of a reply's message (none when it made none)."""
    calls = getattr(message, "tool_calls", None) or ()
    out = []
    for call in calls:
        function = getattr(call, "function", None)
        name, args = getattr(function, "name", None), getattr(function, "arguments", None)
        if isinstance(call.id, str) and isinstance(name, str):
            out.append(ToolCall(id=call.id, name=name, arguments=args or ""))
    return tuple(out)
