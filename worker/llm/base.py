"""The auxiliary LLM seam (docs/architecture.md, "The job"): a ``ChatClient`` completes one
prompt; ``LlmSummarizer`` adapts any client to the core's ``Summarizer``. ``SdkClient`` is what
the providers' clients share: their options, their repr, and provider errors mapped to
``llm_timeout`` or ``llm_error`` with the channel's key scrubbed from their text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from compaction.engine import SummaryRequest
from compaction.errors import LlmError, LlmTimeout
from compaction.redact import redact

#: Output ceiling whatever the budget says (most providers cap lower for small models).
MAX_OUTPUT_TOKENS = 16_000


@dataclass(frozen=True, slots=True)
class Completion:
    text: str
    input_tokens: int = 0
    output_tokens: int = 0


class ChatClient(Protocol):
    provider: str
    model: str

    def complete(self, prompt: str, max_tokens: int) -> Completion: ...


def max_tokens_for(budget_tokens: int) -> int:
    """The budget is a target; leave room so a summary slightly over it is not cut off."""
    return min(MAX_OUTPUT_TOKENS, budget_tokens + budget_tokens // 4 + 256)


class LlmSummarizer:
    """The core's ``Summarizer`` over a ``ChatClient``; counts calls for ``token_update``."""

    def __init__(self, client: ChatClient) -> None:
        self.client = client
        self.calls = 0

    def summarize(self, request: SummaryRequest) -> Completion:
        self.calls += 1
        return self.client.complete(request.prompt, max_tokens_for(request.budget_tokens))


@dataclass(frozen=True, slots=True)
class ClientOptions:
    """What every provider's client is built from: the channel's model, endpoint and key, and
    the settings' limits and sampling. The key is left out of the repr."""

    model: str
    api_key: str | None = field(repr=False)
    base_url: str | None
    timeout_s: float
    max_retries: int
    temperature: float
    thinking: bool

    def sdk_kwargs(self, *, missing_key: str) -> dict[str, Any]:
        """The SDK client's own options. ``missing_key`` stands in for no key: never ``None``,
        which would make the SDK read its provider's environment variable instead."""
        return {
            "api_key": self.api_key or missing_key,
            "base_url": self.base_url,
            "timeout": self.timeout_s,
            "max_retries": self.max_retries,
        }


@dataclass(frozen=True, slots=True)
class SdkErrors:
    """An SDK's exception classes, most specific first (both SDKs name theirs alike)."""

    timeout: type[BaseException]
    status: type[BaseException]
    other: type[BaseException]


class SdkClient:
    """The part of a provider's client that does not depend on its SDK's calls."""

    provider: str
    errors: ClassVar[SdkErrors]

    def __init__(self, options: ClientOptions) -> None:
        self.model = options.model
        self.temperature = options.temperature
        self.thinking = options.thinking
        self._scrub = scrubber(options.api_key)

    def __repr__(self) -> str:  # never the key
        return f"{type(self).__name__}(provider={self.provider!r}, model={self.model!r})"

    def calling(self) -> AbstractContextManager[None]:
        """Wraps one SDK call: its exceptions become the stable error codes."""
        return provider_errors(self.provider, self._scrub, self.errors)


def scrubber(secret: str | None) -> Callable[[str], str]:
    """Removes the channel's key (and any other secret shape) from provider error text."""

    def scrub(text: str) -> str:
        if secret:
            text = text.replace(secret, "[REDACTED]")
        return redact(text)

    return scrub


@contextmanager
def provider_errors(
    provider: str,
    scrub: Callable[[str], str],
    errors: SdkErrors,
) -> Iterator[None]:
    """Map an SDK's exceptions to the stable codes; one line, key scrubbed, status kept. Not
    chained: the SDK's error quotes the provider's body, which may echo the key."""
    try:
        yield
    except errors.timeout:
        raise LlmTimeout(f"{provider}: the auxiliary model timed out") from None
    except errors.status as err:
        code = getattr(err, "status_code", "?")
        raise LlmError(f"{provider} answered {code}: {scrub(_one_line(err))}") from None
    except errors.other as err:
        raise LlmError(f"{provider}: {scrub(_one_line(err))}") from None


def _one_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return (text[0] if text else type(err).__name__)[:300]
