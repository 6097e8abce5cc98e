"""Anthropic Messages API client (``/v1/messages``)."""

from __future__ import annotations

import anthropic
from anthropic.types import MessageParam, ThinkingConfigDisabledParam, ThinkingConfigEnabledParam

from worker.llm.base import Completion, provider_errors, scrubber

# Prefixes of the Claude models that take a temperature ("claude-sonnet-4-2" is the dated
# "claude-sonnet-4-20250514").
_TEMPERATURE_FAMILIES = (
    "claude-3",
    "claude-sonnet-4-0",
    "claude-opus-4-0",
    "claude-sonnet-4-2",
    "claude-opus-4-1",
    "claude-opus-4-2",
    "claude-sonnet-4-5",
    "claude-haiku-4-5",
    "claude-opus-4-5",
)


class AnthropicClient:
    provider = "anthropic"

    def __init__(
        self,
        *,
        model: str,
        api_key: str | None,
        base_url: str | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 2,
        temperature: float = 0.3,
        thinking: bool = False,
    ) -> None:
        self.model = model
        self.temperature = temperature
        self.thinking = thinking
        self._scrub = scrubber(api_key)
        # Built once per process and reused: the SDK keeps the HTTP connection pool.
        self._client = anthropic.Anthropic(
            api_key=api_key or "", base_url=base_url, timeout=timeout_s, max_retries=max_retries
        )

    def __repr__(self) -> str:
        return f"AnthropicClient(model={self.model!r})"

    def complete(self, prompt: str, max_tokens: int) -> Completion:
        messages: list[MessageParam] = [{"role": "user", "content": prompt}]
        thinking: ThinkingConfigEnabledParam | ThinkingConfigDisabledParam
        if self.thinking:
            # Extended thinking's budget comes out of max_tokens.
            budget = max(1_024, max_tokens // 2)
            thinking, max_tokens = {"type": "enabled", "budget_tokens": budget}, max_tokens + budget
        else:
            thinking = {"type": "disabled"}
        extra: dict[str, float] = {}
        if accepts_temperature(self.model) and not self.thinking:
            # Current SDKs no longer expose temperature; older models still take it.
            extra["temperature"] = self.temperature
        with provider_errors(
            self.provider,
            self._scrub,
            timeout=(anthropic.APITimeoutError,),
            status=(anthropic.APIStatusError,),
            other=(anthropic.APIError,),
        ):
            reply = self._client.messages.create(
                model=self.model,
                max_tokens=max_tokens,
                messages=messages,
                thinking=thinking,
                extra_body=extra or None,
            )
        text = "".join(block.text for block in reply.content if block.type == "text")
        usage = reply.usage
        return Completion(text, usage.input_tokens or 0, usage.output_tokens or 0)


def accepts_temperature(model: str) -> bool:
    """Claude 3.x and 4.0–4.5 models take a temperature; later ones fix their own sampling."""
    return model.startswith(_TEMPERATURE_FAMILIES)
