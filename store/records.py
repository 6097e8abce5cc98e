"""Plain records the store hands out and takes (rows never leave a database session), and the
write a core result makes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import SecretStr

from compaction.core.engine import CompactionResult
from compaction.core.event_text import EventName, event_text
from compaction.core.messages import Message

#: ``compacted`` is what the model gets; ``display`` is that view with the compaction-event rows
#: (the user's screen after a reload); ``full`` is every row.
View = Literal["compacted", "display", "full"]
EVENT_TYPE = "compaction_event"


@dataclass(slots=True)  # not frozen: built 10,000 at a time on the hot path, twice as fast
class StoredMessage:
    """A message with its row fields. In the compacted view a pruned tool row's ``message``
    shows the placeholder and carries the original as ``original_content``."""

    message: Message
    seq: int
    seq_minor: int
    created_at: datetime
    compacted_at: datetime | None = None
    compacted_into_id: int | None = None
    is_compaction_summary: bool = False
    pruned_at: datetime | None = None
    metadata: dict[str, Any] | None = None

    @property
    def id(self) -> int:
        assert self.message.id is not None
        return self.message.id

    @property
    def is_event(self) -> bool:
        return bool(self.metadata and self.metadata.get("systemType") == EVENT_TYPE)


@dataclass(frozen=True, slots=True)
class SessionInfo:
    id: str
    agent_id: str | None
    model: str | None
    compaction_version: int
    last_seq: int


@dataclass(frozen=True, slots=True, kw_only=True)
class RunOrigin:
    """Which request a run answers and who ran it: what every run records, failed or not."""

    session_id: str
    reason: str = "manual"
    request_id: str | None = None
    worker: str | None = None
    started_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class EventRow:
    """A compaction-event row for the UI (docs/architecture.md, "Events"), written in the run's
    own transaction; the store adds the run's id (and the summary's, or the failure's code) to
    ``payload``."""

    text: str
    payload: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        event: EventName,
        payload: dict[str, Any],
        language: str | None,
        error: str | None = None,
    ) -> EventRow:
        """The row of ``payload`` (its codes and figures), its text the one fallback sentence
        (``compaction.core.event_text``)."""
        return cls(event_text(event, payload, language, error), payload)


@dataclass(frozen=True, slots=True, kw_only=True)
class SummaryWrite:
    """The summary row and the middle it replaces.

    ``first_seq``/``last_seq`` bound the middle (inclusive); the rows there that are still
    visible are marked by range, never by a list of ids. ``expected_removed`` is how many rows
    the core replaced: a different count means the history changed underneath, and nothing is
    written. ``kept_ids`` are the rows of the range the core kept verbatim (pinned steps;
    docs/architecture.md, "Pins"): never marked, and a pinned row of the range not among them
    refuses the write.
    """

    text: str
    first_seq: int
    last_seq: int
    expected_removed: int
    kept_ids: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionWrite:
    """Everything one compaction run writes, in one transaction fenced by the session's
    version: the summary (``None``: phase 1 alone), the pruned rows kept in the context with a
    placeholder (the tail's), the run, the version bump and the done event row."""

    origin: RunOrigin
    expected_version: int
    summary: SummaryWrite | None = None
    pruned_ids: Sequence[int] = ()
    language: str = "en"
    tokens_before: int | None = None
    tokens_after: int | None = None
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    durations: dict[str, float] = field(default_factory=dict)
    event: EventRow | None = None
    #: what the run kept (``compaction.core.receipt``: the lists) and its cost in USD
    receipt: dict[str, Any] | None = None
    cost: float | None = None


@dataclass(frozen=True, slots=True)
class AppliedCompaction:
    run_id: int
    summary_message_id: int | None  # None: phase 1 alone
    removed_count: int
    pruned_count: int
    version: int


@dataclass(frozen=True, slots=True, kw_only=True)
class FailedRun:
    """A run that changed no message: it failed, or was skipped."""

    origin: RunOrigin
    code: str
    error: str
    status: Literal["failed", "skipped"] = "failed"
    tokens_before: int | None = None
    model: str | None = None
    durations: dict[str, float] | None = None
    event: EventRow | None = None


@dataclass(frozen=True, slots=True)
class RunRecord:
    id: int
    session_id: str
    request_id: str | None
    reason: str
    status: str
    code: str | None
    error: str | None
    tokens_before: int | None
    tokens_after: int | None
    removed_count: int | None
    pruned_count: int | None
    summary_message_id: int | None
    model: str | None
    input_tokens: int | None
    output_tokens: int | None
    durations: dict[str, float] | None
    worker: str | None
    finished_at: datetime
    restored_at: datetime | None
    #: the receipt's lists (docs/architecture.md, "Receipt") and the cost in USD
    receipt: dict[str, Any] | None = None
    cost: float | None = None


@dataclass(frozen=True, slots=True)
class ChannelConfig:
    """A resolved model channel. The key is a ``SecretStr``: its repr and str are masked; the
    base URL, which may carry credentials too, is left out of them."""

    id: int
    name: str
    provider: str
    model: str
    base_url: str | None = field(repr=False)
    api_key: SecretStr | None
    api_key_env: str | None
    is_auxiliary: bool
    #: USD per million input and output tokens (a run's cost); ``None``: no price
    price_input_per_mtok: float | None = None
    price_output_per_mtok: float | None = None


@dataclass(frozen=True, slots=True)
class AgentSettings:
    id: str
    model: str | None
    context_window: int | None
    auxiliary_model_channel_id: int | None
    compaction_strategy: str
    #: ``None``: the system setting applies (docs/architecture.md, "Settings")
    compaction_threshold_percent: int | None
    compaction_protect_first_n: int | None
    #: a fixed threshold in tokens instead of the percentage; ``None``: the system's
    token_budget: int | None = None
    #: ``on`` | ``ask`` | ``off`` (docs/architecture.md, "The gate"); ``None``: the system's
    auto_compact: str | None = None
    #: the warning level in percent of the window; ``None``: the system's
    warn_percent: int | None = None
    #: the channel that answers chat turns; ``None``: the gateway's rule
    chat_channel_id: int | None = None


def mask(key: str) -> str:
    """How a stored key is shown: enough to recognise it, never enough to use it."""
    return f"{key[:3]}…{key[-4:]}" if len(key) >= 12 else "…"


_MASKED = "…"


def _netloc(netloc: str) -> tuple[str, str | None]:
    """A URL's host part as shown, and its credential: the password, or a lone user name (a
    token)."""
    if "@" not in netloc:
        return netloc, None
    userinfo, host = netloc.rsplit("@", 1)
    user, sep, password = userinfo.partition(":")
    return (f"{user}:{_MASKED}@{host}", password) if sep else (f"{_MASKED}@{host}", user)


def _parameters(part: str) -> list[tuple[str, str, str]]:
    """A query's (or fragment's) parameters as ``(name, "=" or "", value)``."""
    return [parameter.partition("=") for parameter in part.split("&") if parameter]


def url_secrets(url: str) -> list[str]:
    """What in a channel's base URL may be a credential: the password (or a lone user name)
    and every query and fragment value (either may carry a key)."""
    try:
        parts = urlsplit(url)
    except ValueError:  # no URL at all: redaction's shapes still apply to its text
        return []
    values = [v for part in (parts.query, parts.fragment) for _, _, v in _parameters(part)]
    return [v for v in (_netloc(parts.netloc)[1], *values) if v]


def mask_url(url: str) -> str:
    """How a base URL is shown (``channel list``, logs, errors): its credential and its query
    and fragment values masked, ``https://user:…@host/v1?api_key=…``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return _MASKED

    def masked(part: str) -> str:
        return "&".join(f"{n}={_MASKED}" if sep else n for n, sep, _ in _parameters(part))

    return urlunsplit(
        parts._replace(
            netloc=_netloc(parts.netloc)[0],
            query=masked(parts.query),
            fragment=masked(parts.fragment),
        )
    )


def compaction_write(
    view: Sequence[StoredMessage],
    result: CompactionResult,
    origin: RunOrigin,
    expected_version: int,
    *,
    model: str | None = None,
    event: EventRow | None = None,
    receipt: dict[str, Any] | None = None,
    cost: float | None = None,
) -> CompactionWrite:
    """The write for a core ``CompactionResult`` computed on ``view`` (the compacted history as
    loaded): the middle's ``seq`` range and count when the core summarized (``model`` wrote the
    summary), and the pruned rows that stay visible."""
    start, end = result.middle
    kept_ids = {stored.id for stored in view[end:]}
    summary = None
    if result.summarized:
        summary = SummaryWrite(
            text=result.summary_text,
            first_seq=view[start].seq,
            last_seq=view[end - 1].seq,
            expected_removed=result.removed_count,
            kept_ids=tuple(result.kept_ids),
        )
    return CompactionWrite(
        origin=origin,
        expected_version=expected_version,
        summary=summary,
        pruned_ids=[i for i in result.pruned_ids if i in kept_ids],
        language=result.language,
        tokens_before=result.tokens_before,
        tokens_after=result.tokens_after,
        model=model if summary else None,
        input_tokens=result.input_tokens if summary else None,
        output_tokens=result.output_tokens if summary else None,
        durations=dict(result.timings),
        event=event,
        receipt=receipt,
        cost=cost,
    )
