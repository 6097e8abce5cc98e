"""Auxiliary model clients: Anthropic, OpenAI, DeepSeek and OpenAI-compatible endpoints."""

from __future__ import annotations

from compaction.service.settings import Settings
from compaction.store.records import ChannelConfig
from compaction.worker.llm.base import (
    ChatClient,
    ClientOptions,
    Completion,
    LlmSummarizer,
    SdkClient,
)

DEEPSEEK_URL = "https://api.deepseek.com"


#: what a built client depends on: a channel edited since gets a new client
ClientKey = tuple[int, str, str, str | None, str | None]


def client_key(channel: ChannelConfig) -> ClientKey:
    return (
        channel.id,
        channel.provider,
        channel.model,
        channel.base_url,
        channel.api_key.get_secret_value() if channel.api_key else None,
    )


def build_client(channel: ChannelConfig, settings: Settings) -> SdkClient:
    # The SDKs are imported here, not at module load: they take seconds to import, and the
    # command line should not pay that for every subcommand.
    from compaction.worker.llm.anthropic_client import AnthropicClient
    from compaction.worker.llm.openai_client import OpenAICompatibleClient

    default_url = DEEPSEEK_URL if channel.provider == "deepseek" else None
    options = ClientOptions(
        model=channel.model,
        api_key=channel.api_key.get_secret_value() if channel.api_key else None,
        base_url=channel.base_url or default_url,
        timeout_s=settings.llm_timeout_s,
        max_retries=settings.llm_max_retries,
        temperature=settings.llm_temperature,
        thinking=settings.llm_thinking,
    )
    if channel.provider == "anthropic":
        return AnthropicClient(options)
    return OpenAICompatibleClient(channel.provider, options)


__all__ = [
    "ChatClient",
    "ClientKey",
    "Completion",
    "LlmSummarizer",
    "SdkClient",
    "build_client",
    "client_key",
]
