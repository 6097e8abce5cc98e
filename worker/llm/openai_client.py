"""OpenAI chat completions (``/v1/chat/completions``): OpenAI, DeepSeek and any compatible
endpoint."""

from __future__ import annotations

from typing import Any

import openai

from worker.llm.base import Completion, provider_errors, scrubber

# Reasoning models take max_completion_tokens and no temperature.
_REASONING_PREFIXES = ("o1", "o3", "o4", "gpt-5")


def is_reasoning_model(model: str) -> bool:
    return model.startswith(_REASONING_PREFIXES)


class OpenAICompatibleClient:
    def __init__(
        self,
        *,
        provider: str,
        model: str,
        api_key: str | None,
        base_url: str | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 2,
        temperature: float = 0.3,
        thinking: bool = False,
    ) -> None:
        self.provider = provider
        self.model = model
        self.temperature = temperature
        self.thinking = thinking
        self._scrub = scrubber(api_key)
        self._client = openai.OpenAI(
            api_key=api_key or "unused",
            base_url=base_url,
            timeout=timeout_s,
            max_retries=max_retries,
        )

    def __repr__(self) -> str:
        return f"OpenAICompatibleClient(provider={self.provider!r}, model={self.model!r})"

    def _arguments(self, max_tokens: int) -> dict[str, Any]:
        if is_reasoning_model(self.model):
            return {"max_completion_tokens": max_tokens}
        arguments: dict[str, Any] = {"max_tokens": max_tokens}
        if self.provider == "deepseek":
            # DeepSeek thinks by default; thinking mode also ignores temperature.
            kind = "enabled" if self.thinking else "disabled"
            arguments["extra_body"] = {"thinking": {"type": kind}}
            if self.thinking:
                return arguments
        arguments["temperature"] = self.temperature
        return arguments

    def complete(self, prompt: str, max_tokens: int) -> Completion:
        with provider_errors(
            self.provider,
            self._scrub,
            timeout=(openai.APITimeoutError,),
            status=(openai.APIStatusError,),
            other=(openai.APIError,),
        ):
            reply = self._client.chat.completions.create(
                model=self.model,
                messages=[{"role": "user", "content": prompt}],
                **self._arguments(max_tokens),
            )
        text = reply.choices[0].message.content if reply.choices else None
        usage = reply.usage
        return Completion(
            text or "",
            usage.prompt_tokens if usage else 0,
            usage.completion_tokens if usage else 0,
        )
