"""Which channel writes an agent's summaries (docs/architecture.md, "Settings"): the agent's own
auxiliary channel, else the system default in ``dict_info``, else none (``no_auxiliary_model``).
Only channels marked ``is_auxiliary`` qualify. Managing channels: store/channels.py."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from sqlalchemy.orm import Session

from compaction.core.errors import NoAuxiliaryModel
from compaction.store.channel_checks import KEY_ENV_PATTERN
from compaction.store.channel_use import channel_config, default_channel_id
from compaction.store.channels import with_key
from compaction.store.db import Repository, read_session
from compaction.store.models import Agent, ModelChannel
from compaction.store.records import ChannelConfig

#: where an agent's auxiliary channel comes from
AuxiliarySource = Literal["agent", "default", "none"]
_LABELS: dict[AuxiliarySource, str] = {
    "agent": "the agent's channel",
    "default": "the default channel",
}


@dataclass(frozen=True, slots=True)
class AuxiliaryChoice:
    """The channel the rule picks for an agent (``None`` with ``source="none"``, or when the
    picked id names no channel) and why; its key is not resolved."""

    source: AuxiliarySource
    channel_id: int | None
    channel: ChannelConfig | None


def _choose(session: Session, agent_id: str | None) -> tuple[AuxiliarySource, int | None]:
    agent = session.get(Agent, agent_id) if agent_id else None
    if agent is not None and agent.auxiliary_model_channel_id is not None:
        return "agent", agent.auxiliary_model_channel_id
    default = default_channel_id(session)
    return ("default", default) if default is not None else ("none", None)


class Auxiliary(Repository):
    def auxiliary_choice(self, agent_id: str | None = None) -> AuxiliaryChoice:
        """What ``resolve_auxiliary`` would pick, for display (``agent show``)."""
        with read_session(self.factory) as session:
            source, channel_id = _choose(session, agent_id)
            row = session.get(ModelChannel, channel_id) if channel_id is not None else None
            return AuxiliaryChoice(source, channel_id, channel_config(row) if row else None)

    def resolve_auxiliary(
        self,
        agent_id: str | None = None,
        environ: Mapping[str, str] | None = None,
        key_env_pattern: str = KEY_ENV_PATTERN,
    ) -> ChannelConfig:
        """The channel that writes summaries for ``agent_id``, with its key resolved from the
        environment when the channel names a variable it may read (``key_env_pattern``;
        ``no_auxiliary_model`` otherwise)."""
        with read_session(self.factory) as session:
            source, channel_id = _choose(session, agent_id)
            if channel_id is None:
                # no fix named here: each screen points at its own (the console's Settings,
                # the command line's ``channel add``; docs/architecture.md, "Error codes")
                raise NoAuxiliaryModel(
                    "no auxiliary model: set one on the agent or a default channel"
                )
            row = session.get(ModelChannel, channel_id)
            if row is None or not row.is_auxiliary:
                raise NoAuxiliaryModel(
                    f"{_LABELS[source]} ({channel_id}) is not an auxiliary channel"
                )
            config = channel_config(row)
        return with_key(config, NoAuxiliaryModel, environ, key_env_pattern)
