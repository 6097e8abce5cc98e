"""Service settings (docs/architecture.md, "Settings"): environment variables prefixed
``COMPACTION_`` and ``.env``; unknown keys are ignored. Every algorithm parameter of
``CompactionConfig`` is a setting too."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict, SettingsError

from compaction.core.config import (
    WARN_PERCENT_MAX,
    WARN_PERCENT_MIN,
    WARN_POINTS_BELOW,
    CompactionConfig,
    CompactionParameters,
)
from compaction.core.contract import AutoCompact
from compaction.core.errors import InvalidConfig, invalid_config
from compaction.store.channel_checks import KEY_ENV_PATTERN


def default_database_url() -> str:
    """The embedded default: a SQLite file in the user's data folder."""
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return f"sqlite:///{base / 'compaction' / 'compaction.db'}"


class Settings(BaseSettings, CompactionParameters):
    model_config = SettingsConfigDict(
        env_prefix="COMPACTION_", env_file=".env", extra="ignore", frozen=True
    )

    # Each description is the row of the generated settings table (docs/reference.md,
    # written by compaction.cli.reference).
    enabled: bool = Field(
        True,
        description="false: the producers never enqueue (the check answers `disabled`, `/compact` "
        "fails `compaction_disabled`) and a worker refuses every job; histories, stats, turns and "
        "restores keep working",
    )
    auto_compact: AutoCompact = Field(
        "on",
        description="over the threshold: `on` compacts, `ask` asks the user first (the turn is "
        "not held), `off` waits for `/compact`; in every mode a call that would not fit the "
        "model's window is compacted first (per agent: `agent set --auto-compact`)",
    )
    warn_percent: int | None = Field(
        None,
        ge=WARN_PERCENT_MIN,
        le=WARN_PERCENT_MAX,
        description="the context's share of the window at which the console warns before an "
        f"automatic compaction, below the threshold; unset: {WARN_POINTS_BELOW} points below "
        "the threshold (a fixed token budget's too)",
    )
    database_url: str = Field(
        default_factory=default_database_url,
        description="SQLAlchemy URL; `postgresql://` uses psycopg 3 (add `?sslmode=require` for "
        "TLS); the default is a SQLite file `compaction/compaction.db` under `$XDG_DATA_HOME` "
        "(else `~/.local/share`), created on first use",
    )
    redis_url: str = Field(
        "redis://127.0.0.1:6379/0", description="the queue, locks and events; `rediss://` for TLS"
    )
    queue_name: str = Field("compaction", description="the RQ queue of compaction jobs")
    channel_prefix: str = Field(
        "compaction", description="prefix of every Redis key, channel and stream"
    )
    lock_ttl_s: float = Field(
        10.0, gt=0, description="the per-session lock's TTL; the holder renews it while it works"
    )
    job_timeout_s: int = Field(
        120,
        ge=5,
        description="bounds the whole job, the worker's own value whatever the producer asked; "
        "at least `LLM_TIMEOUT_S` x (`LLM_MAX_RETRIES` + 1)",
    )
    pending_ttl_s: int = Field(
        90, ge=5, description="how long a queued request blocks another one for the same session"
    )
    manual_lock_wait_s: int = Field(
        120,
        ge=0,
        description="how long a manual request waits for a running compaction of its session, "
        "then runs",
    )
    draft_ttl_seconds: int = Field(
        3600,
        ge=60,
        le=30 * 86_400,
        description='how long a review\'s draft can be applied (docs/architecture.md, "Review")',
    )
    llm_timeout_s: float = Field(
        30.0,
        gt=0,
        description="deadline of one attempt at the auxiliary model, connection to the reply's "
        "last byte",
    )
    llm_max_retries: int = Field(
        2, ge=0, le=10, description="retries of the auxiliary model after a failed attempt"
    )
    llm_temperature: float = Field(
        0.3, ge=0, le=2, description="sent only to models that take a temperature"
    )
    llm_thinking: bool = Field(
        False,
        description="ask the auxiliary model to think first (Anthropic, DeepSeek); off: "
        "summaries need no reasoning",
    )
    channel_cache_s: float = Field(
        5.0,
        ge=0,
        description="how long a worker reuses a resolved auxiliary channel, and a gateway its "
        "list of channels for chat turns (0: every job, every turn); a channel changed with "
        "`compaction channel` applies within this time",
    )
    fallback_summary: bool = Field(
        False,
        description="write the extractive summary when the auxiliary model fails or its summary "
        "is refused (off: the history stays unchanged)",
    )
    events_stream_maxlen: int = Field(
        10_000, ge=100, description="approximate cap of the capped event stream"
    )
    metrics_port: int | None = Field(
        None, description="Prometheus endpoint of `compaction worker` (`--metrics-port` wins)"
    )
    model_windows: dict[str, int] = Field(
        default_factory=dict,
        description="JSON object model -> context window, over the built-in registry",
    )
    channel_key_env_pattern: str = Field(
        KEY_ENV_PATTERN,
        min_length=1,
        description="the environment variables a channel may read its key from (`apiKeyEnv`, "
        "`--api-key-env`), an fnmatch pattern; never a `COMPACTION_*` one, whatever it says",
    )
    gateway_token: SecretStr | None = Field(
        None,
        description="the bearer token of every gateway API call and socket (never logged); "
        "unset: the gateway listens on 127.0.0.1 only",
    )
    gateway_cors_origins: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="origins a browser may call the gateway from (CORS), a JSON list or comma "
        "separated; empty: none",
    )
    gateway_allowed_origins: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="origins (`https://app.example`) whose pages may open the gateway's sockets "
        "and send it anything but GET, besides its own and the CORS origins; a JSON list or "
        "comma separated",
    )
    gateway_allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="`Host` names the gateway answers (`name` or `name:port`) besides the "
        "loopback ones; empty: any with a token, the loopback only without",
    )
    gateway_header_timeout_s: float = Field(
        10.0,
        gt=0,
        description="a request's headers must arrive within this of its first byte, or the "
        "gateway closes the connection (slowloris)",
    )
    gateway_max_connections: int = Field(
        1000,
        ge=1,
        description="open connections (sockets included) of one gateway process past which a "
        "new request is answered 503 at once",
    )
    chat_channel: str | None = Field(
        None,
        max_length=128,
        description="the channel (name or id) answering the chat turns of a session whose agent "
        "chose none and whose model no channel serves; blank: the embedded mode's offline model, "
        'else no_chat_model (docs/architecture.md, "Which channel answers")',
    )

    def __init__(self, **values: Any) -> None:
        # ``invalid_config`` in one line, not pydantic's report (which would echo the value).
        try:
            super().__init__(**values)
        except ValidationError as err:
            raise invalid_config(err, "settings") from None
        except SettingsError as err:  # a COMPACTION_* variable that is not valid JSON
            raise InvalidConfig(f"invalid settings: {err}") from None

    @field_validator("gateway_token", mode="before")
    @classmethod
    def _blank_token_is_none(cls, value: Any) -> Any:
        # An empty token would let "Authorization: Bearer " through: blank means no token.
        text = value.get_secret_value() if isinstance(value, SecretStr) else value
        return None if isinstance(text, str) and not text.strip() else value

    @field_validator(
        "gateway_cors_origins", "gateway_allowed_origins", "gateway_allowed_hosts", mode="before"
    )
    @classmethod
    def _origins(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        if value.lstrip().startswith("["):
            return json.loads(value)
        return [origin.strip() for origin in value.split(",") if origin.strip()]

    @model_validator(mode="after")
    def _warn_below_threshold(self) -> Settings:
        # With a fixed token budget the threshold's share depends on each model's window: a
        # warning level at or over it is met at the threshold (compaction.core.gate).
        warn, threshold = self.warn_percent, self.threshold_percent
        if warn is not None and self.token_budget is None and warn >= threshold:
            raise ValueError(
                f"warn_percent ({warn}) must be below threshold_percent ({threshold}): the "
                "warning comes before the automatic compaction"
            )
        return self

    @model_validator(mode="after")
    def _job_fits_llm(self) -> Settings:
        needed = self.llm_timeout_s * (self.llm_max_retries + 1)
        if self.job_timeout_s < needed:
            raise ValueError(
                f"job_timeout_s ({self.job_timeout_s}) must cover the LLM call and its retries "
                f"(llm_timeout_s x (llm_max_retries + 1) = {needed:g})"
            )
        return self

    @property
    def rq_timeout_s(self) -> int:
        """RQ's timeout of every job: the job's own bound, after waiting for the lock. Any queued
        request may turn manual (a ``/compact`` upgrades it) and wait (docs/architecture.md,
        "The job")."""
        return self.job_timeout_s + self.manual_lock_wait_s

    def compaction_config(self, **overrides: Any) -> CompactionConfig:
        """The algorithm's configuration: these settings, then per-agent/request overrides."""
        values = {name: getattr(self, name) for name in CompactionParameters.model_fields}
        values.update({k: v for k, v in overrides.items() if v is not None})
        return CompactionConfig(**values)
