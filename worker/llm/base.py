"""The auxiliary LLM seam (seed §4.2): a ``ChatClient`` completes one prompt; ``LlmSummarizer``
adapts any client to the core's ``Summarizer``. Provider errors become ``llm_timeout`` or
``llm_error`` with the channel's key scrubbed from their text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

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
    *,
    timeout: tuple[type[BaseException], ...],
    status: tuple[type[BaseException], ...],
    other: tuple[type[BaseException], ...],
) -> Iterator[None]:
    """Map an SDK's exceptions to the stable codes; one line, key scrubbed, status kept. Not
    chained: the SDK's error quotes the provider's body, which may echo the key."""
    try:
        yield
    except timeout:
        raise LlmTimeout(f"{provider}: the auxiliary model timed out") from None
    except status as err:
        code = getattr(err, "status_code", "?")
        raise LlmError(f"{provider} answered {code}: {scrub(_one_line(err))}") from None
    except other as err:
        raise LlmError(f"{provider}: {scrub(_one_line(err))}") from None


def _one_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return (text[0] if text else type(err).__name__)[:300]
