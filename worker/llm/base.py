"""The auxiliary LLM seam (docs/architecture.md, "The job"): a ``ChatClient`` completes one
prompt; ``LlmSummarizer`` adapts any client to the core's ``Summarizer``. ``SdkClient`` is what
the providers' clients share: their options, their repr, a prompt as a one-message conversation
(the gateway's chat model sends whole conversations through ``converse``), and provider errors
mapped to ``llm_timeout`` or ``llm_error`` with the channel's key scrubbed from their text.

The model's reply is not trusted (docs/architecture.md, "Error codes"): a body that is not JSON,
or JSON without a text where the provider puts it, is ``llm_error``, like an error status.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from compaction.core.engine import SummaryRequest
from compaction.core.errors import LlmError, LlmTimeout
from compaction.core.messages import Message, ToolCall
from compaction.core.redact import Secrets, redact
from compaction.store.records import url_secrets
from compaction.worker.llm.retry import retrying

#: Output ceiling whatever the budget says (most providers cap lower for small models).
MAX_OUTPUT_TOKENS = 16_000


@dataclass(frozen=True, slots=True)
class Completion:
    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    #: the tools the model called (only when it was given tools: the gateway's recall)
    tool_calls: tuple[ToolCall, ...] = ()


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
        which would make the SDK read its provider's environment variable instead. Its HTTP
        client gives each attempt one deadline of ``timeout_s`` (``worker/llm/deadline.py``);
        it retries nothing itself: ``SdkClient.converse`` does (``worker/llm/retry.py``)."""
        # Imported with the SDKs, when a client is built (``build_client``): httpx takes a while.
        from compaction.worker.llm.deadline import DeadlineClient

        return {
            "api_key": self.api_key or missing_key,
            "base_url": self.base_url,
            "timeout": self.timeout_s,
            "max_retries": 0,
            "http_client": DeadlineClient(self.timeout_s, follow_redirects=True),
        }


@dataclass(frozen=True, slots=True)
class SdkErrors:
    """An SDK's exception classes, most specific first (both SDKs name theirs alike), and its
    connection error (a refused or dropped connection: worth a retry)."""

    timeout: type[BaseException]
    status: type[BaseException]
    other: type[BaseException]
    connection: type[BaseException]


def as_wire(messages: list[dict[str, Any]], arguments: dict[str, Any]) -> dict[str, Any]:
    """A create call's arguments with ``messages``, built by ``compaction.core.formats`` in the
    wire's own shapes, sent in ``extra_body`` (the SDKs' documented way to add body fields; it
    wins over the typed argument, left empty). Typed, the SDK walks every message against its
    TypedDicts (``maybe_transform``) to change nothing: ~75% of a 20-message call, growing with
    the history (docs/benchmarks.md, "Overheads")."""
    extra = {**arguments.get("extra_body", {}), "messages": messages}
    return {**arguments, "messages": [], "extra_body": extra}


class SdkClient:
    """The part of a provider's client that does not depend on its SDK's calls."""

    provider: str
    errors: ClassVar[SdkErrors]

    def __init__(self, options: ClientOptions) -> None:
        self.model = options.model
        self.temperature = options.temperature
        self.thinking = options.thinking
        self.retries = options.max_retries
        self._scrub = scrubber(options.api_key, options.base_url)

    def __repr__(self) -> str:  # never the key
        return f"{type(self).__name__}(provider={self.provider!r}, model={self.model!r})"

    def complete(self, prompt: str, max_tokens: int) -> Completion:
        return self.converse([Message(role="user", content=prompt)], max_tokens)

    def converse(
        self,
        messages: Sequence[Message],
        max_tokens: int,
        tools: Sequence[dict[str, Any]] = (),
    ) -> Completion:
        """The model's reply to a conversation: an attempt, retried after a backoff while it
        fails in a way that may pass (``worker/llm/retry.py``); the last failure as its code."""
        with self.calling():
            return retrying(
                lambda: self.attempt(messages, max_tokens, tools),
                retries=self.retries,
                errors=self.errors,
            )

    def attempt(
        self,
        messages: Sequence[Message],
        max_tokens: int,
        tools: Sequence[dict[str, Any]] = (),
    ) -> Completion:
        """One call of the provider's API, offering ``tools`` (definitions in the provider's
        format: ``compaction.tools``); each provider's client makes it."""
        raise NotImplementedError

    def calling(self) -> AbstractContextManager[None]:
        """Wraps one SDK call: its exceptions become the stable error codes."""
        return provider_errors(self.provider, self._scrub, self.errors)


def scrubber(secret: str | None, base_url: str | None = None) -> Callable[[str], str]:
    """Removes the channel's key, the credentials in its base URL (and any other secret
    shape) from provider error text."""
    in_url = Secrets(url_secrets(base_url) if base_url else ())

    def scrub(text: str) -> str:
        if secret:
            text = text.replace(secret, "[REDACTED]")
        return in_url.hide(redact(text))

    return scrub


def malformed(provider: str, what: str) -> LlmError:
    """The error for a reply that is no reply of the provider's."""
    return LlmError(f"{provider}: malformed reply: {what}")


def text_of(value: object, provider: str) -> str:
    """A reply's text, which must be a string (None: the model wrote none)."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise malformed(provider, f"the text is {type(value).__name__}, not a string")
    return value


def count_of(value: object) -> int:
    """A usage count: what is not a count is none (the figures are estimates anyway)."""
    return value if isinstance(value, int) and value >= 0 else 0


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
    except json.JSONDecodeError as err:  # the SDKs let the decoder's error through
        raise malformed(provider, f"not JSON ({err.msg})") from None
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
