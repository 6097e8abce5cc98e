"""Every parameter of the algorithm (docs/architecture.md, "The algorithm"), validated once.

The service builds one from its settings (``COMPACTION_*`` variables) and an agent's
overrides; the core only ever reads it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from compaction.core.contract import CONTEXT_WINDOW_MIN
from compaction.core.errors import invalid_config
from compaction.core.tokens import EstimatorName, TextEstimator, text_estimator

SummaryLanguage = Literal["auto", "zh", "en"]

# The ranges an operator may set, for the whole service and per agent: one home, read by the
# fields below, the store's agent settings (their checks and the table's constraints) and the
# command line's help.
THRESHOLD_PERCENT_MIN, THRESHOLD_PERCENT_MAX = 30, 95
THRESHOLD_PERCENT_STEP = 5  # per agent (docs/architecture.md, "Settings")
PROTECT_FIRST_N_MIN, PROTECT_FIRST_N_MAX = 1, 10
TOKEN_BUDGET_MIN = 1_000
STRATEGIES = ("lossy",)
#: whether a session over its threshold compacts by itself (docs/architecture.md, "Settings"):
#: ``ask`` asks the user first, ``off`` waits for ``/compact``; a call that would not fit the
#: model's window is compacted first in every mode
AUTO_COMPACT_MODES = ("on", "ask", "off")
#: the warning level's range; unset, it is the threshold less ``WARN_POINTS_BELOW``
WARN_PERCENT_MIN, WARN_PERCENT_MAX = 5, 90
WARN_POINTS_BELOW = 10
#: the most the user's words section may hold (a summary is read by a model with a window)
USER_WORDS_MAX_TOKENS_MAX = 50_000


class CompactionParameters(BaseModel):
    """The fields, with defaults and ranges; the service's settings inherit them too, so an
    environment variable exists for every parameter (``COMPACTION_THRESHOLD_PERCENT``...)."""

    context_window: int = Field(200_000, ge=CONTEXT_WINDOW_MIN)
    threshold_percent: int = Field(70, ge=THRESHOLD_PERCENT_MIN, le=THRESHOLD_PERCENT_MAX)
    protect_first_n: int = Field(3, ge=PROTECT_FIRST_N_MIN, le=PROTECT_FIRST_N_MAX)
    #: A fixed threshold in tokens instead of ``threshold_percent`` of the window (capped at the
    #: window); ``None``: the percentage applies (docs/architecture.md, "Settings").
    token_budget: int | None = Field(None, ge=TOKEN_BUDGET_MIN)
    tail_token_budget_ratio: float = Field(0.20, gt=0, le=1)
    min_tail_messages: int = Field(3, ge=1)
    prune_min_chars: int = Field(200, ge=0)
    summary_min_tokens: int = Field(2_000, ge=1)
    summary_max_tokens: int = Field(12_000, ge=1)
    summary_ratio: float = Field(0.20, gt=0, le=1)
    chars_per_token: int = Field(4, ge=1, le=16)
    token_estimator: EstimatorName = "cjk"
    serialize_head_chars: int = Field(4_000, ge=0)
    serialize_tail_chars: int = Field(1_500, ge=0)
    min_summary_chars: int = Field(200, ge=0)
    summary_language: SummaryLanguage = "auto"
    #: Cap on the serialized turns of one summarizer call, sized to the auxiliary model's window;
    #: a longer middle is summarized chunk by chunk.
    summary_input_max_tokens: int = Field(100_000, ge=4_000)
    ledger_max_tokens: int = Field(8_000, ge=0)
    #: Cap of the summary's section of the user's own words, kept verbatim (newest first, the
    #: rest by first line; docs/algorithm.md, "The user's own words"); 0 turns it off.
    user_words_max_tokens: int = Field(4_000, ge=0, le=USER_WORDS_MAX_TOKENS_MAX)
    redact_secrets: bool = True


def threshold_tokens(window: int, percent: int, budget: int | None) -> int:
    """The one rule for a session's threshold in tokens: the fixed budget when there is one
    (never over the window), else ``percent`` of the window."""
    if budget is not None:
        return min(budget, window)
    return window * percent // 100


class CompactionConfig(CompactionParameters):
    model_config = ConfigDict(frozen=True, extra="forbid")

    def __init__(self, **values: Any) -> None:
        # One clear line with a stable code instead of pydantic's multi-line report.
        try:
            super().__init__(**values)
        except ValidationError as err:
            raise invalid_config(err, "compaction config") from None

    @model_validator(mode="after")
    def _consistent(self) -> CompactionConfig:
        if self.summary_min_tokens > self.summary_max_tokens:
            raise ValueError("summary_min_tokens must not exceed summary_max_tokens")
        if self.summary_input_max_tokens < self.summary_max_tokens + 2_000:
            raise ValueError(
                "summary_input_max_tokens must leave room for the running summary "
                "(at least summary_max_tokens + 2000)"
            )
        return self

    @property
    def threshold_tokens(self) -> int:
        return threshold_tokens(self.context_window, self.threshold_percent, self.token_budget)

    @property
    def tail_token_budget(self) -> int:
        return round(self.threshold_tokens * self.tail_token_budget_ratio)

    def summary_budget(self, compressed_tokens: int) -> int:
        """``max(min, min(compressed x ratio, max))`` (docs/architecture.md, "The algorithm", phase
        3)."""
        return max(
            self.summary_min_tokens,
            min(int(compressed_tokens * self.summary_ratio), self.summary_max_tokens),
        )

    def estimator(self) -> TextEstimator:
        return text_estimator(self.token_estimator, self.chars_per_token)
