"""OpenAI chat completions (``/v1/chat/completions``): OpenAI, DeepSeek and any compatible
endpoint."""

from __future__ import annotations

import openai

from worker.llm.base import ClientOptions, Completion, SdkClient, SdkErrors
from worker.llm.rules import openai_arguments


class OpenAICompatibleClient(SdkClient):
    errors = SdkErrors(openai.APITimeoutError, openai.APIStatusError, openai.APIError)

    def __init__(self, provider: str, options: ClientOptions) -> None:
        self.provider = provider
        super().__init__(options)
        self._client = openai.OpenAI(**options.sdk_kwargs(missing_key="unused"))

    def complete(self, prompt: str, max_tokens: int) -> Completion:
        arguments = openai_arguments(
            self.provider,
            self.model,
            max_tokens,
            temperature=self.temperature,
            thinking=self.thinking,
        )
        with self.calling():
            reply = self._client.chat.completions.create(
                model=self.model, messages=[{"role": "user", "content": prompt}], **arguments
            )
        text = reply.choices[0].message.content if reply.choices else None
        usage = reply.usage
        return Completion(
            text or "",
            usage.prompt_tokens if usage else 0,
            usage.completion_tokens if usage else 0,
        )
