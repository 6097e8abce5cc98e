"""The API's answers as models (docs/architecture.md, "The gateway"), so that the OpenAPI
document says the shape of every one and a client can be generated from it.

One casing on the wire: camelCase keys, from one alias generator (``Answer``). The producers
build the command line's shapes (``producers.views``, ``producers.stats``); a model here takes
them by field name or by alias and writes them camelCase. So a history row, snake_case in
``compaction history --json`` (a contract of its own), is camelCase over HTTP and on the
sockets. Unknown keys are refused: a figure the producers add fails the gateway's tests until
it is declared here, never reaches a client undocumented.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal, Self

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from compaction.core.contract import AutoCompact, AuxTokens, ContextWarning, TokenUsage
from compaction.core.messages import Role
from compaction.core.segments import Segment
from compaction.gateway.chat_model import ChatSource
from compaction.gateway.schemas import View
from compaction.producers.ensure import EnsureStatus
from compaction.service.queue import EnqueueStatus
from compaction.store.auxiliary import AuxiliarySource
from compaction.store.models import DRAFT_STATUSES, RUN_STATUSES


def _with_offset(value: datetime) -> datetime:
    return value if value.tzinfo else value.replace(tzinfo=UTC)


#: a time with its offset, as RFC 3339 wants: SQLite gives the store's UTC times back without
#: one (store/models.py, ``utcnow``)
Time = Annotated[datetime, AfterValidator(_with_offset)]


class Answer(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        extra="forbid",
        frozen=True,
    )

    @classmethod
    def of(cls, shape: dict[str, Any]) -> Self:
        """The model of a shape the producers built (snake_case or camelCase keys)."""
        return cls.model_validate(shape)

    def wire(self) -> dict[str, Any]:
        """The camelCase JSON object, for the sockets (the routes' answers FastAPI writes)."""
        return self.model_dump(mode="json", by_alias=True)


class Health(Answer):
    status: Literal["ok"]


# -- sessions


class SessionItem(Answer):
    id: str
    title: str | None = Field(description="the name a user sees; null: the id names it")
    agent_id: str | None
    model: str | None
    messages: int = Field(description="rows of the compacted view")
    used_tokens: int
    max_tokens: int = Field(description="the context window")
    percent: float = Field(description="usedTokens of maxTokens, one decimal")
    threshold_percent: int
    compactions: int = Field(description="standing (not restored) compactions")
    created_at: Time


class SessionList(Answer):
    sessions: list[SessionItem] = Field(description="the newest first")


class CreatedSession(Answer):
    id: str


class Imported(Answer):
    id: str
    imported: int = Field(description="the messages appended")


class ToolCallRow(Answer):
    id: str
    name: str
    arguments: str = Field(description="JSON text, as the model wrote it")


class HistoryRow(Answer):
    """A stored message (``producers.views.history_rows``)."""

    id: int
    seq: int
    role: Role
    content: str = Field(description="a pruned tool result's placeholder in the compacted view")
    tool_calls: list[ToolCallRow]
    tool_call_id: str | None
    compacted_at: Time | None = Field(description="set once folded into a summary")
    compacted_into_id: int | None = Field(description="the summary's id")
    is_compaction_summary: bool
    pruned_at: Time | None
    pinned: bool = Field(description="never summarized or pruned (docs/architecture.md, Pins)")
    metadata: dict[str, Any] | None = Field(
        description="an event row's systemType, event and figures; a restored summary's "
        "restoredByRunId"
    )


class History(Answer):
    session_id: str
    view: View
    messages: list[HistoryRow]


class Pin(Answer):
    """A pin or an unpin (``producers.pins.set_pinned``; docs/architecture.md, "Pins")."""

    session_id: str
    message_id: int
    pinned: bool
    changed: bool = Field(description="false when the message already was so")
    pinned_tokens: int = Field(description="the session's pinned tokens afterwards")


class Recalled(Answer):
    """One compacted original a recall found (``producers.recall``; docs/architecture.md,
    "Recall")."""

    message_id: int
    seq: int
    role: Role
    tool_name: str | None = Field(description="the tool a tool result answered")
    content: str = Field(description="redacted; cut to fit the budget when ``truncated``")
    truncated: bool


class Recall(Answer):
    """A recall: the session's compacted originals matching the query, best first, within
    ``maxTokens`` (docs/architecture.md, "Recall")."""

    session_id: str
    query: str
    max_tokens: int
    matched: int = Field(description="originals found before the budget kept some")
    tokens: int = Field(description="estimated tokens of the results")
    results: list[Recalled]


class Queued(Answer):
    """``/compact``'s answer: the outcome comes as events."""

    status: EnqueueStatus
    request_id: str | None = Field(description="this request's, or the queued or running one's")


# -- context figures


class ChatUsage(Answer):
    input_tokens: int
    output_tokens: int


class TurnFigures(Answer):
    """One model call's figures, recorded by the gateway (``producers.stats.record_turn``)."""

    id: int | None
    created_at: Time | None
    model: str | None
    tokens_by_segment: dict[Segment, int]
    total_tokens: int
    threshold_tokens: int | None
    decision: str = Field(description="the pre-call check's status")
    usage: ChatUsage | None


class LastRun(Answer):
    id: int
    status: str = Field(json_schema_extra={"enum": list(RUN_STATUSES)})
    code: str | None
    reason: str
    tokens_before: int | None
    tokens_after: int | None
    removed_count: int | None
    finished_at: Time


class ContextStats(Answer):
    """``compaction stats --json`` (``producers.stats.session_stats``)."""

    session_id: str
    messages: int = Field(description="rows of the compacted view")
    used_tokens: int
    max_tokens: int = Field(description="the context window")
    percent: float
    threshold_percent: int
    threshold_tokens: int
    budget_tokens: int = Field(description="thresholdTokens under the second seed's name")
    token_budget: int | None = Field(description="the fixed budget that sets the threshold")
    estimated: bool
    tokens_by_role: dict[Role, int]
    tokens_by_segment: dict[Segment, int]
    pinned_tokens: int = Field(description="the pinned messages' tokens, their steps included")
    latest_turn: TurnFigures | None
    turns: list[TurnFigures] = Field(description="the latest model calls, newest first")
    compactions: int
    warning: ContextWarning | None = Field(
        None, description="past the warning level: the token_update's warning (The gate)"
    )
    compaction_cost: float | None = Field(
        None, description="USD of the session's runs at their channels' prices; null: unpriced"
    )
    aux_tokens: AuxTokens | None = Field(None, description="the auxiliary model's, all runs")
    last_run: LastRun | None


# -- a review's drafts (docs/architecture.md, "Review")


class Draft(Answer):
    """A review's draft (``producers.drafts.draft_row``): nothing of it is applied until
    ``POST /api/drafts/{id}/apply``."""

    id: int
    session_id: str
    request_id: str | None
    status: str = Field(json_schema_extra={"enum": list(DRAFT_STATUSES)})
    focus: str | None
    summary: str = Field(description="the summary applying writes (the user's text once edited)")
    edited: bool
    stage: str | None
    removed_count: int = Field(description="messages the summary replaces")
    pruned_count: int = Field(description="tool outputs pruned in the kept tail")
    tokens_before: int
    tokens_after: int
    receipt: RunReceipt | None = Field(description="what the draft keeps, as a run's receipt")
    model: str | None
    input_tokens: int | None
    output_tokens: int | None
    cost: float | None
    run_id: int | None = Field(description="the run an applied draft wrote")
    created_at: Time
    expires_at: Time


class DraftList(Answer):
    drafts: list[Draft] = Field(description="the newest first")


class AppliedDraft(Answer):
    """``POST /api/drafts/{id}/apply``: the run written (undo it as any run)."""

    draft: Draft
    run_id: int
    summary_message_id: int | None
    removed_count: int
    pruned_count: int
    tokens_before: int
    tokens_after: int


# -- runs


class ReceiptIdentifiers(Answer):
    """The compacted span's exact identifiers (``compaction.core.receipt``), per kind."""

    kept: int
    total: int
    totals: dict[str, int]
    missing_counts: dict[str, int]
    missing: dict[str, list[str]] = Field(description="those not kept, by kind (capped)")


class ReceiptUserMessages(Answer):
    verbatim: int
    total: int
    folded: list[str] = Field(description="first lines of those folded into the summary")


class RunReceipt(Answer):
    identifiers: ReceiptIdentifiers
    user_messages: ReceiptUserMessages


class Run(Answer):
    """A compaction run (``producers.views.run_row``)."""

    id: int
    session_id: str
    request_id: str | None
    reason: str = Field(description="auto or manual")
    status: str = Field(json_schema_extra={"enum": list(RUN_STATUSES)})
    code: str | None = Field(description="a failed or skipped run's code")
    error: str | None
    tokens_before: int | None
    tokens_after: int | None
    removed_count: int | None
    pruned_count: int | None
    summary_message_id: int | None
    model: str | None
    finished_at: Time
    restored_at: Time | None
    input_tokens: int | None = Field(None, description="the auxiliary model's, from its usage")
    output_tokens: int | None = None
    cost: float | None = Field(None, description="USD, from the channel's prices; null: none")
    receipt: RunReceipt | None = Field(None, description="what the run kept (a succeeded run)")


class RunList(Answer):
    runs: list[Run] = Field(description="oldest first")


# -- agents


class AgentList(Answer):
    agents: list[str] = Field(description="the agents' ids")


class InheritedValue(Answer):
    value: int | None
    source: Literal["agent", "system"]
    setting: str = Field(description="the system setting's variable")


class InheritedMode(Answer):
    value: AutoCompact
    source: Literal["agent", "system"]
    setting: str = Field(description="the system setting's variable")


class ChatChannelChoice(Answer):
    id: int
    name: str | None = Field(description="null: the channel was removed")


class EffectiveChannel(Answer):
    id: int | None
    name: str | None
    auxiliary: bool | None
    source: AuxiliarySource


class Effective(Answer):
    threshold_percent: InheritedValue
    protect_first_n: InheritedValue
    token_budget: InheritedValue = Field(description="value null: the percentage of the window")
    auxiliary_channel: EffectiveChannel
    auto_compact: InheritedMode
    warn_percent: InheritedValue = Field(
        description="value null: the threshold less 10 points of the window"
    )


class Agent(Answer):
    """The agent's own values (``null``: blank) and the effective ones with their source."""

    id: str
    model: str | None
    context_window: int | None
    auxiliary_model_channel_id: int | None
    compaction_strategy: str | None
    compaction_threshold_percent: int | None
    compaction_protect_first_n: int | None
    token_budget: int | None
    auto_compact: AutoCompact | None
    warn_percent: int | None
    chat_channel_id: int | None
    chat_channel: ChatChannelChoice | None = Field(
        description="the channel that answers the agent's chat turns; null: the gateway's rule"
    )
    effective: Effective


# -- channels


class Channel(Answer):
    """A channel, its key and base URL masked (keys are write-only)."""

    id: int
    name: str
    provider: str
    model: str
    base_url: str | None
    api_key: str | None = Field(description="masked")
    api_key_env: str | None
    auxiliary: bool
    default: bool
    price_input: float | None = Field(None, description="USD per million input tokens")
    price_output: float | None = Field(None, description="USD per million output tokens")


class ChannelList(Answer):
    channels: list[Channel]


class RemovedChannel(Answer):
    removed: Channel
    agents: list[str] = Field(description="the agents now on the default channel")
    default_cleared: bool
    chat_agents: list[str] = Field(
        default_factory=list,
        description="the agents whose chat channel it was: their turns follow the system's rule",
    )


# -- a turn


class EnsuredFigures(Answer):
    status: EnsureStatus
    used_tokens: int


class ChatChannel(Answer):
    """``GET /api/sessions/{id}/chat-channel``: which channel answers the session's chat turns
    and why (docs/architecture.md, "Which channel answers"); ``source`` ``none``: a turn would
    be refused ``no_chat_model`` (``detail`` says why)."""

    session_id: str
    agent_id: str | None = Field(description="the agent whose setting chooses (agent set)")
    id: int | None = Field(description="the channel; null: the offline model, or none")
    name: str | None
    model: str | None = Field(description="the channel's model")
    source: ChatSource | Literal["none"]
    detail: str | None = None


class Turn(Answer):
    """``POST /api/sessions/{id}/messages``: the stored reply, the pre-call check, the chat
    model's usage."""

    reply: HistoryRow
    ensured: EnsuredFigures
    usage: TokenUsage
