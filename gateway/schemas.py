"""The API's request bodies (docs/architecture.md, "The gateway"): camelCase keys, unknown keys
refused. Where a key may be sent as ``null`` it means "clear" (back to the inherited value),
and a key left out means "unchanged": ``model_fields_set`` tells the two apart. The answers are
built by ``producers.views`` and ``producers.stats``, the shapes the command line's ``--json``
prints."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from compaction.core.config import TOKEN_BUDGET_MIN, WARN_PERCENT_MAX, WARN_PERCENT_MIN
from compaction.core.contract import CONTEXT_WINDOW_MAX, CONTEXT_WINDOW_MIN, AutoCompact, Name

View = Literal["compacted", "display", "full"]


class Body(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, extra="forbid", frozen=True)

    def given(self, field: str) -> bool:
        """Whether the request carried the key (``null`` included)."""
        return field in self.model_fields_set


class NewSession(Body):
    id: str | None = Field(None, description="a random id when absent")
    agent_id: Name | None = Field(None, description="created with blank settings if missing")
    model: Name | None = None
    messages: list[dict[str, Any]] = Field(
        default_factory=list, description="OpenAI-format messages, stored with the session"
    )
    title: Name | None = Field(None, description="the name a user sees; absent: the id")


class SessionUpdate(Body):
    """A session renamed: ``title`` ``null`` clears it (the id names the session again)."""

    title: Name | None = Field(description="the name a user sees (an imported file's name)")


class CompactRequest(Body):
    focus: str | None = Field(None, description="what the summary should keep above all")
    review: bool = Field(
        False,
        strict=True,
        description="write a draft to review (GET /api/drafts/{id}) instead of applying",
    )


class AgentUpdate(Body):
    """``null`` clears a value (the system's applies); a key left out is unchanged."""

    threshold_percent: int | None = None
    protect_first_n: int | None = None
    token_budget: int | None = Field(
        None,
        ge=TOKEN_BUDGET_MIN,
        le=CONTEXT_WINDOW_MAX,
        description="a fixed threshold in tokens instead of the percentage (capped at the "
        "window); null: COMPACTION_TOKEN_BUDGET",
    )
    auxiliary_channel: int | str | None = Field(
        None, description="an auxiliary channel's id or name; null: the default channel"
    )
    compaction_strategy: Name | None = None
    model: Name | None = None
    context_window: int | None = Field(None, ge=CONTEXT_WINDOW_MIN, le=CONTEXT_WINDOW_MAX)
    auto_compact: AutoCompact | None = Field(
        None,
        description="over the threshold: on compacts, ask asks the user, off waits for /compact "
        "(a call that would not fit the window is compacted first); null: "
        "COMPACTION_AUTO_COMPACT",
    )
    warn_percent: int | None = Field(
        None,
        ge=WARN_PERCENT_MIN,
        le=WARN_PERCENT_MAX,
        description="the warning level in percent of the window, below the threshold; null: "
        "COMPACTION_WARN_PERCENT",
    )
    chat_channel: int | str | None = Field(
        None,
        description="the id or name of the channel (not auxiliary) that answers chat turns; "
        "null: the gateway's rule",
    )


class NewChannel(Body):
    name: str
    provider: str
    model: str
    base_url: str | None = None
    api_key: str | None = Field(None, description="stored, never returned unmasked")
    api_key_env: str | None = Field(None, description="the variable that holds the key")
    auxiliary: bool = False
    default: bool = False
    price_input: float | None = Field(
        None, description="USD per million input tokens (a run's cost; docs: Receipt)"
    )
    price_output: float | None = Field(None, description="USD per million output tokens")


class ChannelUpdate(Body):
    """A key left out is unchanged; ``baseUrl: null`` clears the URL, ``apiKey: null`` or
    ``apiKeyEnv: null`` forgets the key (unless the other one is given)."""

    name: str | None = None
    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    api_key_env: str | None = None
    auxiliary: bool | None = None
    #: ``null`` (either) with no price given clears both
    price_input: float | None = Field(
        None, description="USD per million input tokens (a run's cost; docs: Receipt)"
    )
    price_output: float | None = Field(None, description="USD per million output tokens")


class ErrorDetail(BaseModel):
    code: str
    message: str


class ErrorAnswer(BaseModel):
    """Every refusal and failure: ``{"error": {"code", "message"}}``."""

    error: ErrorDetail


#: the refusals every route may answer, for the OpenAPI document
ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorAnswer, "description": description}
    for status, description in (
        (400, "invalid_request: the request is wrong (the message says how)"),
        (401, "unauthorized: no bearer token, or the wrong one"),
        (403, "forbidden_host, forbidden_origin: a Host or a page's Origin not trusted"),
        (404, "session_not_found, not_found"),
        (409, "conflict: a name or id taken, a channel in use"),
        (413, "too_large: the body is over the cap"),
        (503, "db_error, redis: the database or Redis failed"),
    )
}
