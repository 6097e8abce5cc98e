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

from compaction.core.config import CompactionConfig, CompactionParameters
from compaction.core.errors import InvalidConfig, invalid_config


def default_database_url() -> str:
    """The embedded default: a SQLite file in the user's data folder."""
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return f"sqlite:///{base / 'compaction' / 'compaction.db'}"


class Settings(BaseSettings, CompactionParameters):
    model_config = SettingsConfigDict(
        env_prefix="COMPACTION_", env_file=".env", extra="ignore", frozen=True
    )

    #: off: the producers never enqueue and a worker refuses every job (``compaction_disabled``);
    #: histories, stats, turns and restores keep working (docs/architecture.md, "Settings")
    enabled: bool = True
    database_url: str = Field(default_factory=default_database_url)
    redis_url: str = "redis://127.0.0.1:6379/0"
    queue_name: str = "compaction"
    channel_prefix: str = "compaction"
    #: the per-session lock's TTL; the holder renews it while it works
    lock_ttl_s: float = Field(10.0, gt=0)
    #: bounds the whole job, the LLM call and its retries included
    job_timeout_s: int = Field(120, ge=5)
    #: how long a queued request blocks another one for the same session
    pending_ttl_s: int = Field(90, ge=5)
    #: how long a manual request waits for a running compaction of its session to end
    manual_lock_wait_s: int = Field(120, ge=0)
    llm_timeout_s: float = Field(30.0, gt=0)
    llm_max_retries: int = Field(2, ge=0, le=10)
    llm_temperature: float = Field(0.3, ge=0, le=2)
    llm_thinking: bool = False
    #: how long a worker reuses a resolved auxiliary channel (0: resolve it for every job); a
    #: channel changed with ``compaction channel`` applies within this time
    channel_cache_s: float = Field(5.0, ge=0)
    #: write a deterministic extractive summary when the auxiliary model fails (off: the seed
    #: says a failure leaves the history unchanged)
    fallback_summary: bool = False
    events_stream_maxlen: int = Field(10_000, ge=100)
    metrics_port: int | None = None
    #: model → context window, over the built-in registry (JSON in the environment)
    model_windows: dict[str, int] = Field(default_factory=dict)
    #: a key for a one-off auxiliary channel given by environment (never logged)
    auxiliary_api_key: SecretStr | None = None
    #: the bearer token of every gateway API call and socket (never logged); unset, the gateway
    #: listens on the loopback only (docs/architecture.md, "The gateway")
    gateway_token: SecretStr | None = None
    #: origins a browser may call the gateway from (CORS), a JSON list or comma separated;
    #: empty: none
    gateway_cors_origins: Annotated[list[str], NoDecode] = Field(default_factory=list)

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

    @field_validator("gateway_cors_origins", mode="before")
    @classmethod
    def _origins(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        if value.lstrip().startswith("["):
            return json.loads(value)
        return [origin.strip() for origin in value.split(",") if origin.strip()]

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
