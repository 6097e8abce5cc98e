"""Who relies on a channel (its agents, the default entry, the agents chatting with it) and
what a removal or an edit leaves them (docs/architecture.md, "Settings"); used by
store/channels.py and store/auxiliary.py."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import SecretStr
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from compaction.core.errors import Conflict
from compaction.store.models import Agent, DictInfo, DictType, ModelChannel
from compaction.store.records import ChannelConfig

DICT_TYPE_KEY = "compaction"
DEFAULT_CHANNEL = "default_auxiliary_channel_id"
#: agents named in one message; the rest are counted
NAMES_SHOWN = 10


@dataclass(frozen=True, slots=True)
class ChannelChange:
    """A channel as an edit or a removal left it, and what followed for the agents: those whose
    own auxiliary channel it was now use the default channel (``default``, ``None``: there is
    none), and ``default_cleared`` says it stopped being the default. ``released_chats``: the
    agents whose chat channel a removal took (their turns follow the system's rule now)."""

    channel: ChannelConfig
    released_agents: tuple[str, ...] = ()
    released_chats: tuple[str, ...] = ()
    default_cleared: bool = False
    default: ChannelConfig | None = None


def channel_config(row: ModelChannel) -> ChannelConfig:
    return ChannelConfig(
        id=row.id,
        name=row.name,
        provider=row.provider,
        model=row.model,
        base_url=row.base_url,
        api_key=SecretStr(row.api_key) if row.api_key else None,
        api_key_env=row.api_key_env,
        is_auxiliary=row.is_auxiliary,
        price_input_per_mtok=row.price_input_per_mtok,
        price_output_per_mtok=row.price_output_per_mtok,
    )


def _default_info(session: Session) -> DictInfo | None:
    return session.scalar(
        select(DictInfo)
        .join(DictType, DictInfo.type_id == DictType.id)
        .where(DictType.key == DICT_TYPE_KEY, DictInfo.name == DEFAULT_CHANNEL)
    )


def default_channel_id(session: Session) -> int | None:
    info = _default_info(session)
    value = info.value if info is not None else None
    return int(value) if value and value.isdigit() else None


def set_default(session: Session, channel_id: int) -> None:
    kind = session.scalar(select(DictType).where(DictType.key == DICT_TYPE_KEY))
    if kind is None:
        kind = DictType(name="Compaction settings", key=DICT_TYPE_KEY)
        session.add(kind)
        session.flush()
    info = _default_info(session)
    if info is None:
        session.add(DictInfo(type_id=kind.id, name=DEFAULT_CHANNEL, value=str(channel_id)))
    else:
        info.value = str(channel_id)


def names(agents: list[str]) -> str:
    shown = ", ".join(agents[:NAMES_SHOWN])
    more = len(agents) - NAMES_SHOWN
    return f"{shown} and {more} more" if more > 0 else shown


class ChannelUse:
    """Who relies on a channel: the agents whose own channel it is, the default entry, and
    (``chats``: a removal) the agents whose chat channel it is."""

    def __init__(self, session: Session, row: ModelChannel, *, chats: bool = False) -> None:
        self.row = row
        self.agents = list(
            session.scalars(
                select(Agent.id)
                .where(Agent.auxiliary_model_channel_id == row.id)
                .order_by(Agent.id)
            )
        )
        self.is_default = default_channel_id(session) == row.id
        column = Agent.chat_channel_id
        self.chats = (
            list(session.scalars(select(Agent.id).where(column == row.id).order_by(Agent.id)))
            if chats
            else []
        )

    def refuse_unless(self, force: bool, refused: str, forced: str) -> None:
        """``refused``: "is not removed"; ``forced``: "removes it"."""
        if force or not (self.agents or self.is_default or self.chats):
            return
        who = "agent {} uses it" if len(self.agents) == 1 else "agents {} use it"
        uses = [who.format(names(self.agents))] if self.agents else []
        uses += ["it is the default auxiliary channel"] if self.is_default else []
        chat = "agent {} chats with it" if len(self.chats) == 1 else "agents {} chat with it"
        uses += [chat.format(names(self.chats))] if self.chats else []
        after: list[str] = {
            (False, False): [],
            (True, False): ["the agents fall back to the default channel"],
            (False, True): ["there is no default auxiliary channel until one is set"],
            (True, True): [
                "there is no default auxiliary channel until one is set, so the agents have none"
            ],
        }[bool(self.agents), self.is_default]
        after += ["their chat turns follow the system's rule"] if self.chats else []
        raise Conflict(
            f"channel {self.row.name!r} {refused}: {' and '.join(uses)} "
            f"(--force {forced} anyway; {'; '.join(after)})"
        )

    def release(self, session: Session) -> ChannelChange:
        """The agents fall back to the default channel; the default entry goes if it is this
        channel."""
        if self.agents:
            session.execute(
                update(Agent)
                .where(Agent.auxiliary_model_channel_id == self.row.id)
                .values(auxiliary_model_channel_id=None)
            )
        if self.chats:  # the column has no ON DELETE action (store/models.py)
            session.execute(
                update(Agent)
                .where(Agent.chat_channel_id == self.row.id)
                .values(chat_channel_id=None)
            )
        info = _default_info(session) if self.is_default else None
        if info is not None:
            session.delete(info)
            session.flush()
        default = default_channel_id(session)
        row = session.get(ModelChannel, default) if default is not None else None
        return ChannelChange(
            channel_config(self.row),
            released_agents=tuple(self.agents),
            released_chats=tuple(self.chats),
            default_cleared=self.is_default,
            default=channel_config(row) if row is not None else None,
        )
