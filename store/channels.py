"""Auxiliary model channels and agent compaction settings (docs/architecture.md, "Settings",
"Tables").

Resolution: the agent's own auxiliary channel, else the system default in ``dict_info``, else
``no_auxiliary_model``. Only channels marked ``is_auxiliary`` qualify. A channel stores its key
or, better, the name of an environment variable holding it; keys are ``SecretStr`` from the
moment they leave the table.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace

from pydantic import SecretStr
from sqlalchemy import select
from sqlalchemy.orm import Session

from compaction.config import (
    PROTECT_FIRST_N_MAX,
    PROTECT_FIRST_N_MIN,
    STRATEGIES,
    THRESHOLD_PERCENT_MAX,
    THRESHOLD_PERCENT_MIN,
    THRESHOLD_PERCENT_STEP,
)
from compaction.contract import CONTEXT_WINDOW_MAX, CONTEXT_WINDOW_MIN, MODEL_MAX_CHARS
from compaction.errors import InvalidRequest, NoAuxiliaryModel
from store.db import Repository, read_session, write_session
from store.models import PROVIDERS, Agent, DictInfo, DictType, ModelChannel
from store.records import AgentSettings, ChannelConfig

DICT_TYPE_KEY = "compaction"
DEFAULT_CHANNEL = "default_auxiliary_channel_id"


def validate_agent_settings(
    threshold_percent: int | None, protect_first_n: int | None, strategy: str | None
) -> None:
    """The ranges of ``compaction.config``, the agent's threshold on its steps."""
    if threshold_percent is not None and (
        not THRESHOLD_PERCENT_MIN <= threshold_percent <= THRESHOLD_PERCENT_MAX
        or threshold_percent % THRESHOLD_PERCENT_STEP
    ):
        raise InvalidRequest(
            f"threshold {threshold_percent}% is out of range: {THRESHOLD_PERCENT_MIN} to "
            f"{THRESHOLD_PERCENT_MAX}, in steps of {THRESHOLD_PERCENT_STEP}"
        )
    if protect_first_n is not None and not (
        PROTECT_FIRST_N_MIN <= protect_first_n <= PROTECT_FIRST_N_MAX
    ):
        raise InvalidRequest(
            f"protected head {protect_first_n} is out of range: "
            f"{PROTECT_FIRST_N_MIN} to {PROTECT_FIRST_N_MAX}"
        )
    if strategy is not None and strategy not in STRATEGIES:
        known = " or ".join(repr(s) for s in STRATEGIES)
        raise InvalidRequest(f"unknown compaction strategy {strategy!r}; expected {known}")


def _config(row: ModelChannel) -> ChannelConfig:
    return ChannelConfig(
        id=row.id,
        name=row.name,
        provider=row.provider,
        model=row.model,
        base_url=row.base_url,
        api_key=SecretStr(row.api_key) if row.api_key else None,
        api_key_env=row.api_key_env,
        is_auxiliary=row.is_auxiliary,
    )


def _settings(row: Agent) -> AgentSettings:
    return AgentSettings(
        id=row.id,
        model=row.model,
        context_window=row.context_window,
        auxiliary_model_channel_id=row.auxiliary_model_channel_id,
        compaction_strategy=row.compaction_strategy,
        compaction_threshold_percent=row.compaction_threshold_percent,
        compaction_protect_first_n=row.compaction_protect_first_n,
    )


def _default_channel_id(session: Session) -> int | None:
    value = session.scalar(
        select(DictInfo.value)
        .join(DictType, DictInfo.type_id == DictType.id)
        .where(DictType.key == DICT_TYPE_KEY, DictInfo.name == DEFAULT_CHANNEL)
    )
    return int(value) if value and value.isdigit() else None


class Channels(Repository):
    def add_channel(
        self,
        name: str,
        *,
        provider: str,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str | None = None,
        auxiliary: bool = False,
        default: bool = False,
    ) -> ChannelConfig:
        if provider not in PROVIDERS:
            raise InvalidRequest(f"unknown provider {provider!r}; expected one of {PROVIDERS}")
        if api_key and api_key_env:
            raise InvalidRequest("give the key or the variable that holds it, not both")
        if default and not auxiliary:
            raise InvalidRequest("only an auxiliary channel can be the default one")
        with write_session(self.factory) as session:
            if session.scalar(select(ModelChannel.id).where(ModelChannel.name == name)):
                raise InvalidRequest(f"a channel named {name!r} exists already")
            row = ModelChannel(
                name=name,
                provider=provider,
                model=model,
                base_url=base_url,
                api_key=api_key,
                api_key_env=api_key_env,
                is_auxiliary=auxiliary,
            )
            session.add(row)
            session.flush()
            if default:
                self._set_default(session, row.id)
            return _config(row)

    def list_channels(self) -> list[ChannelConfig]:
        with read_session(self.factory) as session:
            return [
                _config(r) for r in session.scalars(select(ModelChannel).order_by(ModelChannel.id))
            ]

    def default_channel_id(self) -> int | None:
        with read_session(self.factory) as session:
            return _default_channel_id(session)

    def set_default_channel(self, channel_id: int) -> None:
        with write_session(self.factory) as session:
            row = session.get(ModelChannel, channel_id)
            if row is None or not row.is_auxiliary:
                raise InvalidRequest(f"channel {channel_id} is not an auxiliary channel")
            self._set_default(session, channel_id)

    @staticmethod
    def _set_default(session: Session, channel_id: int) -> None:
        kind = session.scalar(select(DictType).where(DictType.key == DICT_TYPE_KEY))
        if kind is None:
            kind = DictType(name="Compaction settings", key=DICT_TYPE_KEY)
            session.add(kind)
            session.flush()
        info = session.scalar(
            select(DictInfo).where(DictInfo.type_id == kind.id, DictInfo.name == DEFAULT_CHANNEL)
        )
        if info is None:
            session.add(DictInfo(type_id=kind.id, name=DEFAULT_CHANNEL, value=str(channel_id)))
        else:
            info.value = str(channel_id)

    def resolve_auxiliary(
        self, agent_id: str | None = None, environ: Mapping[str, str] | None = None
    ) -> ChannelConfig:
        """The channel that writes summaries for ``agent_id`` (docs/architecture.md, "Settings"),
        with its key resolved from the environment when the channel names a variable."""
        environ = os.environ if environ is None else environ
        with read_session(self.factory) as session:
            agent = session.get(Agent, agent_id) if agent_id else None
            candidates = [
                ("the agent's channel", agent.auxiliary_model_channel_id if agent else None),
                ("the default channel", _default_channel_id(session)),
            ]
            for label, channel_id in candidates:
                if channel_id is None:
                    continue
                row = session.get(ModelChannel, channel_id)
                if row is None or not row.is_auxiliary:
                    raise NoAuxiliaryModel(f"{label} ({channel_id}) is not an auxiliary channel")
                config = _config(row)
                if config.api_key is None and config.api_key_env:
                    value = environ.get(config.api_key_env)
                    if not value:
                        raise NoAuxiliaryModel(
                            f"channel {config.name!r} reads its key from "
                            f"{config.api_key_env}, which is not set"
                        )
                    config = replace(config, api_key=SecretStr(value))
                return config
        raise NoAuxiliaryModel(
            "no auxiliary model: set one on the agent or a default channel "
            "(compaction channel add ... --auxiliary --default)"
        )

    def set_agent(
        self,
        agent_id: str,
        *,
        threshold_percent: int | None = None,
        protect_first_n: int | None = None,
        strategy: str | None = None,
        auxiliary_channel_id: int | None = None,
        clear_auxiliary_channel: bool = False,
        model: str | None = None,
        context_window: int | None = None,
    ) -> AgentSettings:
        """Create or update an agent's compaction settings; out-of-range values are refused
        before anything is written."""
        validate_agent_settings(threshold_percent, protect_first_n, strategy)
        # The job carries the agent's model and window: bounds the job refuses are refused here.
        if (
            context_window is not None
            and not CONTEXT_WINDOW_MIN <= context_window <= CONTEXT_WINDOW_MAX
        ):
            raise InvalidRequest(
                f"context window {context_window} is out of range: "
                f"{CONTEXT_WINDOW_MIN} to {CONTEXT_WINDOW_MAX}"
            )
        if model is not None and len(model) > MODEL_MAX_CHARS:
            raise InvalidRequest(f"a model name is at most {MODEL_MAX_CHARS} characters")
        with write_session(self.factory) as session:
            agent = session.get(Agent, agent_id)
            if agent is None:
                agent = Agent(id=agent_id)
                session.add(agent)
            if auxiliary_channel_id is not None:
                channel = session.get(ModelChannel, auxiliary_channel_id)
                if channel is None or not channel.is_auxiliary:
                    raise InvalidRequest(
                        f"channel {auxiliary_channel_id} is not an auxiliary channel"
                    )
                agent.auxiliary_model_channel_id = auxiliary_channel_id
            if clear_auxiliary_channel:
                agent.auxiliary_model_channel_id = None
            for field, value in (
                ("compaction_threshold_percent", threshold_percent),
                ("compaction_protect_first_n", protect_first_n),
                ("compaction_strategy", strategy),
                ("model", model),
                ("context_window", context_window),
            ):
                if value is not None:
                    setattr(agent, field, value)
            session.flush()
            return _settings(agent)

    def get_agent(self, agent_id: str) -> AgentSettings | None:
        with read_session(self.factory) as session:
            row = session.get(Agent, agent_id)
            return _settings(row) if row is not None else None
