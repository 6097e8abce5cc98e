"""Anthropic Messages API client (``/v1/messages``)."""

from __future__ import annotations

import anthropic

from worker.llm.base import ClientOptions, Completion, SdkClient, SdkErrors
from worker.llm.rules import anthropic_arguments


class AnthropicClient(SdkClient):
    provider = "anthropic"
    errors = SdkErrors(anthropic.APITimeoutError, anthropic.APIStatusError, anthropic.APIError)

    def __init__(self, options: ClientOptions) -> None:
        super().__init__(options)
        # Built once per process and reused: the SDK keeps the HTTP connection pool.
        self._client = anthropic.Anthropic(**options.sdk_kwargs(missing_key=""))

    def complete(self, prompt: str, max_tokens: int) -> Completion:
        arguments = anthropic_arguments(
            self.model, max_tokens, temperature=self.temperature, thinking=self.thinking
        )
        with self.calling():
            reply = self._client.messages.create(
                model=self.model, messages=[{"role": "user", "content": prompt}], **arguments
            )
        text = "".join(block.text for block in reply.content if block.type == "text")
        usage = reply.usage
        return Completion(text, usage.input_tokens or 0, usage.output_tokens or 0)
