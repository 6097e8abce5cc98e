"""The wire contract (docs/architecture.md, "Events"): the job payload and every event, as pydantic
models.

Field names are snake_case in Python and camelCase on the wire (``to_wire()``); every message
carries ``"v": 1``. ``json_schemas()`` gives the JSON Schema of each, exported to ``schemas/`` so
that gateways in other languages can validate against it.
"""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, TypeGuard

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    model_validator,
)
from pydantic.alias_generators import to_camel

from compaction.core.errors import ErrorCode, SkipCode

Reason = Literal["auto", "manual"]
#: the segment a run compacts (docs/architecture.md, "Events"): the history before the current
#: request, or the current request's tool loop
Stage = Literal["history", "loop"]
#: who wrote a stage's summary (docs/architecture.md, "Events"): the auxiliary model, or the
#: offline extractive summarizer (no channel configured, or COMPACTION_FALLBACK_SUMMARY after the
#: model failed), which the user's screen must tell apart
SummaryWriter = Literal["model", "offline"]
#: whether a session over its threshold compacts by itself (docs/architecture.md, "The gate")
AutoCompact = Literal["on", "ask", "off"]
SCHEMA_VERSION: Literal[1] = 1


def now() -> datetime:
    return datetime.now(UTC)


def new_request_id() -> str:
    return uuid.uuid4().hex


class Camel(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        extra="forbid",
        # The patterns below are ECMA 262 and Python alike; Rust's regex cannot spell a surrogate.
        regex_engine="python-re",
    )

    def to_wire(self) -> dict[str, Any]:
        """The camelCase JSON object that goes on the wire."""
        return self.model_dump(by_alias=True, mode="json", exclude_none=True)

    def to_json(self) -> str:
        return self.model_dump_json(by_alias=True, exclude_none=True)


class Wire(Camel):
    """A top-level message: versioned."""

    v: Literal[1] = SCHEMA_VERSION


# Text on the wire is valid Unicode: JSON can spell a lone surrogate ("\ud800"), which no
# database, Redis key or JSON encoder takes. Ids and names hold no control character either.
# One pattern serves the validator and the exported schema (docs/architecture.md, "The job"):
# a pair of surrogates is one character to Python and a gateway's validator, two to ECMA 262.
_PAIR = r"[\ud800-\udbff][\udc00-\udfff]"
_END = r"(?![\s\S])"  # the end: Python's "$" also matches before a final newline
TEXT_PATTERN = rf"^(?:[^\ud800-\udfff]|{_PAIR})*{_END}"
NAME_PATTERN = rf"^(?:[^\x00-\x1f\x7f\ud800-\udfff]|{_PAIR})*{_END}"

#: a session id's length, for every layer that reads or stores one (the wire models here)
MAX_SESSION_ID = 128
# The one session-id rule (docs/architecture.md, "Tables"): the id is a segment of every URL of
# its session, so "/" (and "\\", which browsers read as "/") would split the path, and "." or
# ".." is a dot segment URL parsers drop: a session stored under one could never be reached.
SESSION_ID_PATTERN = rf"^(?!\.\.?{_END})(?:[^\x00-\x1f\x7f/\\\ud800-\udfff]|{_PAIR})*{_END}"
SESSION_ID_RULE = (
    f"a session id is 1 to {MAX_SESSION_ID} characters, without control characters, "
    "'/' or '\\', and not '.' or '..'"
)
SessionId = Annotated[
    str, Field(min_length=1, max_length=MAX_SESSION_ID, pattern=SESSION_ID_PATTERN)
]
MAX_REQUEST_ID = 64
RequestId = Annotated[str, Field(min_length=1, max_length=MAX_REQUEST_ID, pattern=NAME_PATTERN)]


def _name(value: object, longest: int) -> TypeGuard[str]:
    return (
        isinstance(value, str) and 0 < len(value) <= longest and bool(re.match(NAME_PATTERN, value))
    )


#: an agent's id, a model's or a channel's name: the columns that hold them are 128 long
NAME_MAX_CHARS = 128
NAME_RULE = f"1 to {NAME_MAX_CHARS} characters, without control characters"


def valid_name(value: object, longest: int = NAME_MAX_CHARS) -> TypeGuard[str]:
    """Whether ``value`` is a name a store column holds (``NAME_RULE``; ``longest`` for a longer
    column): a longer one, or a NUL, is the client's mistake, never the database's
    (docs/architecture.md, "Tables")."""
    return _name(value, longest)


def _checked_name(value: str) -> str:
    if not valid_name(value):
        raise ValueError(NAME_RULE)
    return value


#: ``NAME_RULE`` as a field type: a refusal names the field and the rule, never the value
Name = Annotated[str, Field(max_length=NAME_MAX_CHARS), AfterValidator(_checked_name)]


def valid_session_id(value: object) -> TypeGuard[str]:
    """Whether ``value`` is a session id (``SESSION_ID_RULE``)."""
    return (
        isinstance(value, str)
        and 0 < len(value) <= MAX_SESSION_ID
        and bool(re.match(SESSION_ID_PATTERN, value))
    )


def readable_ids(data: object) -> tuple[str | None, str | None]:
    """The session and request ids of a payload that failed validation, where an event can
    name them (docs/architecture.md, "The job")."""
    if not isinstance(data, dict):
        return None, None
    session_id, request_id = data.get("sessionId"), data.get("requestId")
    return (
        session_id if valid_session_id(session_id) else None,
        request_id if _name(request_id, MAX_REQUEST_ID) else None,
    )


def _json_number(value: object) -> object:
    """A number as JSON spells one: pydantic alone would also take ``"5000"`` and ``true``,
    which the schema's ``integer`` refuses."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("must be a JSON number")
    return value


#: RFC 3339 with its offset (``Z`` or ``+hh:mm``): pydantic alone would also take a time
#: without offset, a date or a number of seconds, which the schema's ``date-time`` refuses
RFC3339 = (
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?"
    rf"(?:[Zz]|[+-][0-9]{{2}}:[0-9]{{2}}){_END}"
)


def _rfc3339(value: object) -> object:
    if isinstance(value, datetime) or (isinstance(value, str) and re.match(RFC3339, value)):
        return value
    raise ValueError("must be an RFC 3339 date-time with an offset, e.g. 2026-11-30T00:00:00Z")


Timestamp = Annotated[
    AwareDatetime, BeforeValidator(_rfc3339), Field(json_schema_extra={"pattern": RFC3339})
]

#: a request's model name and context window; an agent's settings keep to them too
MODEL_MAX_CHARS = 128
CONTEXT_WINDOW_MIN, CONTEXT_WINDOW_MAX = 1_000, 10_000_000
ModelName = Annotated[str, Field(max_length=MODEL_MAX_CHARS, pattern=NAME_PATTERN)]
ContextWindow = Annotated[
    int, Field(ge=CONTEXT_WINDOW_MIN, le=CONTEXT_WINDOW_MAX), BeforeValidator(_json_number)
]


class CompactionRequested(Wire):
    """The job payload: one request to compact one session."""

    v: Annotated[Literal[1], BeforeValidator(_json_number)] = SCHEMA_VERSION
    type: Literal["compaction_requested"] = "compaction_requested"
    session_id: SessionId
    reason: Reason
    request_id: RequestId = Field(default_factory=new_request_id)
    requested_at: Timestamp = Field(default_factory=now)
    model: ModelName | None = None
    context_window: ContextWindow | None = None
    focus: Annotated[str, Field(max_length=2_000, pattern=TEXT_PATTERN)] | None = None
    #: write a draft for the user to review instead of applying (docs/architecture.md,
    #: "Review"); only a manual request may ask for one
    review: bool = False

    @model_validator(mode="after")
    def _review_is_manual(self) -> CompactionRequested:
        # automatic compactions never wait for a review (docs/architecture.md, "Review")
        if self.review and self.reason != "manual":
            raise ValueError("review: only a manual request may ask for a review")
        return self


class Event(Wire):
    session_id: SessionId
    request_id: str | None = None
    reason: Reason | None = None
    timestamp: datetime = Field(default_factory=now)


class CompactionStart(Event):
    type: Literal["compaction_start"] = "compaction_start"
    #: absent from a producer that predates segments
    stage: Stage | None = None


class Count(Camel):
    kept: int
    total: int


class UserMessageCount(Camel):
    #: user messages of the compacted span quoted word for word in the result
    verbatim: int
    total: int


class AuxTokens(Camel):
    input: int
    output: int


class Receipt(Camel):
    """What a run kept and what it cost (docs/architecture.md, "Receipt"); the run record holds
    the lists behind the counts."""

    identifiers: Count
    user_messages: UserMessageCount
    aux_tokens: AuxTokens | None = None
    #: USD, from the auxiliary channel's prices; null when it has none
    cost: float | None = None


class CompactionDone(Event):
    type: Literal["compaction_done"] = "compaction_done"
    stage: Stage | None = None
    #: the stage the same request runs next (the loop's, when the history alone left the
    #: session over its threshold): this done is not the request's last event
    next_stage: Stage | None = None
    removed_count: int
    #: null when an auto request only pruned old tool outputs (phase 1 was enough)
    summary_message_id: int | None = None
    tokens_before: int
    tokens_after: int
    pruned_count: int = 0
    run_id: int | None = None
    estimated: bool = True
    #: who wrote the summary; absent when none was written (pruning alone was enough)
    summarizer: SummaryWriter | None = None
    receipt: Receipt | None = None


class CompactionDraft(Event):
    """A review's draft is ready (docs/architecture.md, "Review"): nothing was applied."""

    type: Literal["compaction_draft"] = "compaction_draft"
    draft_id: int
    tokens_before: int
    tokens_after: int
    receipt: Receipt | None = None
    expires_at: datetime


class CompactionFailed(Event):
    type: Literal["compaction_failed"] = "compaction_failed"
    #: the stage that failed; absent when the request failed before any stage began
    stage: Stage | None = None
    error: str
    code: ErrorCode


class CompactionSkipped(Event):
    """Not a failure: another run holds the session, the same request is already pending, or a
    stage's result was not smaller than its input (``not_smaller``: not applied)."""

    type: Literal["compaction_skipped"] = "compaction_skipped"
    code: SkipCode
    detail: str | None = None
    #: the stage whose result was not applied (``not_smaller``); absent when the request
    #: stopped before any stage began
    stage: Stage | None = None


class TokenUsage(Camel):
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    api_calls: int = 0


class ContextUsage(Camel):
    used_tokens: int
    max_tokens: int
    percent: float
    threshold_percent: int
    estimated: bool = True
    #: the session's standing compactions (the status line's "compacted N times"); absent from
    #: a producer that does not count them
    compactions: int | None = None


class ContextWarning(Camel):
    """The gate (docs/architecture.md, "The gate"): the session passed its warning level."""

    #: the context's size now, in percent of the window
    percent: float
    #: the automatic compaction's threshold, in percent of the window
    threshold: float
    #: an estimate from the recent turns' growth; absent when there is none yet
    turns_left: int | None = None
    mode: AutoCompact = "on"
    #: the threshold is reached and ``mode`` is ``ask``: the user is asked to compact
    due: bool = False


class TokenUpdate(Event):
    type: Literal["token_update"] = "token_update"
    current: TokenUsage = Field(default_factory=TokenUsage)
    context: ContextUsage
    warning: ContextWarning | None = None


AnyEvent = Annotated[
    CompactionStart
    | CompactionDone
    | CompactionDraft
    | CompactionFailed
    | CompactionSkipped
    | TokenUpdate,
    Field(discriminator="type"),
]
_EVENTS: TypeAdapter[AnyEvent] = TypeAdapter(AnyEvent)
FINAL_EVENTS = ("compaction_done", "compaction_draft", "compaction_failed", "compaction_skipped")


def is_final(event: AnyEvent) -> bool:
    """Whether ``event`` is the last its request gets: a done, failed or skipped event, but not
    a stage's done that another stage follows (docs/architecture.md, "Events")."""
    return event.type in FINAL_EVENTS and getattr(event, "next_stage", None) is None


def parse_event(data: str | bytes | dict[str, Any]) -> AnyEvent:
    """A wire event (JSON text or dict) as its typed model; ``ValidationError`` if it is not."""
    if isinstance(data, dict):
        return _EVENTS.validate_python(data)
    return _EVENTS.validate_json(data)


def parse_request(data: str | bytes | dict[str, Any]) -> CompactionRequested:
    if isinstance(data, dict):
        return CompactionRequested.model_validate(data)
    return CompactionRequested.model_validate_json(data)


def json_schemas() -> dict[str, dict[str, Any]]:
    """File name → JSON Schema (by alias, i.e. as on the wire)."""
    models: dict[str, type[Wire]] = {
        "compaction_requested": CompactionRequested,
        "compaction_start": CompactionStart,
        "compaction_done": CompactionDone,
        "compaction_draft": CompactionDraft,
        "compaction_failed": CompactionFailed,
        "compaction_skipped": CompactionSkipped,
        "token_update": TokenUpdate,
    }
    schemas = {
        f"{name}.schema.json": model.model_json_schema(by_alias=True)
        for name, model in models.items()
    }
    schemas["event.schema.json"] = _EVENTS.json_schema(by_alias=True)
    return schemas
