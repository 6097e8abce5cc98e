"""Model channels: add, list, edit, make default, remove (docs/architecture.md, "Settings",
"Tables").

A channel stores its key or, better, the name of an environment variable holding it; keys are
``SecretStr`` from the moment they leave the table. Only channels marked ``is_auxiliary`` may
write summaries. A channel an agent uses, or the default one, is neither removed nor unmarked
unless forced; forcing it lets those agents fall back to the default channel. Which channel
serves an agent: store/auxiliary.py.

A key goes only where it belongs (docs/security.md, "Secrets"): a channel reads only a variable
matching the pattern (``COMPACTION_CHANNEL_KEY_ENV_PATTERN``), never the service's own; its base
URL is http or https with a host; and a new destination (base URL or provider) is refused
unless the key is given again or cleared, so a stored key never follows an edited URL.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import re
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

from pydantic import SecretStr
from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from compaction.core.contract import valid_name
from compaction.core.errors import CompactionError, Conflict, InvalidRequest, NotFound
from compaction.store.db import Repository, read_session, write_session
from compaction.store.models import PROVIDERS, Agent, DictInfo, DictType, ModelChannel
from compaction.store.records import ChannelConfig
from compaction.store.sessions import check_name

DICT_TYPE_KEY = "compaction"
DEFAULT_CHANNEL = "default_auxiliary_channel_id"
#: a channel's id, or its name (digits that name no channel are an id)
ChannelRef = int | str
#: agents named in one message; the rest are counted
NAMES_SHOWN = 10
#: the variables a channel may read its key from: the default of
#: ``COMPACTION_CHANNEL_KEY_ENV_PATTERN`` (service/settings.py)
KEY_ENV_PATTERN = "*_API_KEY"
#: never a channel's key, whatever the pattern: the service's own settings hold the database
#: URL and the gateway token, and they are read whatever the case of their names
RESERVED_ENV_PREFIX = "COMPACTION_"
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: what a base URL may be: the SDKs speak HTTP, and a screen may show it as a link
URL_SCHEMES = ("http", "https")


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


def key_env_allowed(name: str, pattern: str = KEY_ENV_PATTERN) -> bool:
    """Whether a channel may read its key from the variable ``name``."""
    return (
        _VARIABLE.fullmatch(name) is not None
        and not name.upper().startswith(RESERVED_ENV_PREFIX)
        and fnmatch.fnmatchcase(name, pattern)
    )


def _key_env_rule(pattern: str) -> str:
    return f"COMPACTION_CHANNEL_KEY_ENV_PATTERN {pattern!r}, never COMPACTION_*"


def with_key(
    config: ChannelConfig,
    missing: type[CompactionError],
    environ: Mapping[str, str] | None = None,
    key_env_pattern: str = KEY_ENV_PATTERN,
) -> ChannelConfig:
    """The channel with its key read from the variable it names, if it names one; ``missing``
    is the error raised when that variable is not set, or may not be read (a channel stored
    before the rule, or edited in the database): whoever asks names its own code."""
    if config.api_key is not None or not config.api_key_env:
        return config
    if not key_env_allowed(config.api_key_env, key_env_pattern):
        raise missing(
            f"channel {config.name!r} names a key variable channels may not read "
            f"({_key_env_rule(key_env_pattern)}): give it its key again"
        )
    value = (os.environ if environ is None else environ).get(config.api_key_env)
    if not value:
        raise missing(
            f"channel {config.name!r} reads its key from {config.api_key_env}, which is not set"
        )
    return replace(config, api_key=SecretStr(value))


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


def _set_default(session: Session, channel_id: int) -> None:
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


def find_channel(session: Session, ref: ChannelRef) -> ModelChannel:
    """The channel ``ref`` names, or ``NotFound``."""
    row = None
    if isinstance(ref, str):
        row = session.scalar(select(ModelChannel).where(ModelChannel.name == ref))
        # 18 digits always fit a BIGINT id; a longer number is a name no channel has
        digits = ref.isascii() and ref.isdigit() and len(ref) <= 18
        ref = int(ref) if row is None and digits else ref
    if isinstance(ref, int):
        row = session.get(ModelChannel, ref)
    if row is None:
        raise NotFound(f"no channel {ref!r}")
    return row


def _url_allowed(url: str) -> bool:
    if any(c.isspace() or not c.isprintable() for c in url):
        return False
    try:
        parts = urlsplit(url)
        port = parts.port  # ValueError: not a number, or out of range
    except ValueError:
        return False
    return parts.scheme.lower() in URL_SCHEMES and bool(parts.hostname) and port != 0


def _check_fields(
    provider: str | None,
    api_key: str | None,
    api_key_env: str | None,
    base_url: str | None,
    key_env_pattern: str,
) -> None:
    """What a channel is given, before anything is stored. Neither the variable's name nor the
    URL is echoed: a key pasted in the wrong field, or a URL's credentials."""
    if provider is not None and provider not in PROVIDERS:
        raise InvalidRequest(f"unknown provider {provider!r}; expected one of {PROVIDERS}")
    if api_key and api_key_env:
        raise InvalidRequest("give the key or the variable that holds it, not both")
    if api_key_env and not key_env_allowed(api_key_env, key_env_pattern):
        raise InvalidRequest(
            "apiKeyEnv: a channel reads its key only from a variable matching "
            f"{_key_env_rule(key_env_pattern)}"
        )
    if base_url is not None and not _url_allowed(base_url):
        raise InvalidRequest("baseUrl: an http or https URL with a host")


#: the longest base URL and key their columns hold (store/models.py)
URL_MAX_CHARS = KEY_MAX_CHARS = 512


def _check_sizes(
    name: str | None,
    model: str | None,
    base_url: str | None,
    api_key: str | None,
    api_key_env: str | None,
) -> None:
    """What no column holds is the caller's mistake, refused naming the field, never a
    database error (docs/architecture.md, "Tables"). The key is never echoed."""
    check_name(name, "name")
    check_name(model, "model")
    check_name(api_key_env or None, "apiKeyEnv")
    if base_url is not None and len(base_url) > URL_MAX_CHARS:
        raise InvalidRequest(f"baseUrl: at most {URL_MAX_CHARS} characters")
    if api_key and not valid_name(api_key, KEY_MAX_CHARS):
        raise InvalidRequest(
            f"apiKey: at most {KEY_MAX_CHARS} characters, without control characters"
        )


#: the highest price per million tokens a channel may be given (USD): far above any model's
MAX_PRICE = 100_000.0


def _prices(
    price_input: float | None, price_output: float | None, clear: bool = False
) -> dict[str, float | None]:
    """The price columns an add or an edit sets (docs/architecture.md, "Receipt"): each given
    one, checked; ``clear`` sets both to none (and takes no price with it)."""
    given = {"price_input_per_mtok": price_input, "price_output_per_mtok": price_output}
    if clear:
        if price_input is not None or price_output is not None:
            raise InvalidRequest("set the prices or clear them, not both")
        return dict.fromkeys(given)
    for column, value in given.items():
        field = "priceInput" if column == "price_input_per_mtok" else "priceOutput"
        if value is not None and not (0 <= value <= MAX_PRICE):  # NaN fails both
            raise InvalidRequest(f"{field}: USD per million tokens, from 0 to {MAX_PRICE:g}")
    return {k: v for k, v in given.items() if v is not None}


def _refuse_new_destination(
    row: ModelChannel, provider: str | None, base_url: str | None, rekeyed: bool
) -> None:
    """A stored key (or variable) never follows a new base URL or provider: the edit gives the
    key again or clears it. ``base_url`` is the edited value (``None``: cleared)."""
    moved = row.provider != (provider or row.provider) or row.base_url != base_url
    if moved and (row.api_key or row.api_key_env) and not rekeyed:
        raise InvalidRequest(
            f"channel {row.name!r} would send its key to a new destination (baseUrl or "
            "provider): give the key again (apiKey or apiKeyEnv; --api-key or --api-key-env), "
            "or clear it"
        )


def _check_name(session: Session, name: str, row: ModelChannel | None = None) -> None:
    found = session.scalar(select(ModelChannel.id).where(ModelChannel.name == name))
    if found is not None and (row is None or found != row.id):
        raise Conflict(f"a channel named {name!r} exists already")


def _names(agents: list[str]) -> str:
    shown = ", ".join(agents[:NAMES_SHOWN])
    more = len(agents) - NAMES_SHOWN
    return f"{shown} and {more} more" if more > 0 else shown


class _Use:
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
        uses = [who.format(_names(self.agents))] if self.agents else []
        uses += ["it is the default auxiliary channel"] if self.is_default else []
        chat = "agent {} chats with it" if len(self.chats) == 1 else "agents {} chat with it"
        uses += [chat.format(_names(self.chats))] if self.chats else []
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


class Channels(Repository):
    """The channels; ``recent_channels`` keeps the list a moment (``list_channels`` reads it
    every time)."""

    def __init__(self, factory: sessionmaker[Session]) -> None:
        super().__init__(factory)
        #: this instance's channel writes so far: a write makes the kept list stale
        self._writes = 0
        #: the kept list: the writes it saw, when it was read (monotonic), the channels
        self._kept: tuple[int, float, list[ChannelConfig]] | None = None

    @contextlib.contextmanager
    def _write(self) -> Iterator[Session]:
        """``write_session``; the kept list is stale once it ends (committed or not)."""
        try:
            with write_session(self.factory) as session:
                yield session
        finally:
            self._writes += 1

    def recent_channels(self, max_age_s: float) -> list[ChannelConfig]:
        """``list_channels``, kept up to ``max_age_s`` seconds and until this store writes a
        channel: a gateway's turn chooses its channel from it (docs/benchmarks.md,
        "Overheads"); an edit through another process shows within ``max_age_s``
        (``Settings.channel_cache_s``, as the worker's channel)."""
        kept, writes = self._kept, self._writes
        if kept is not None and kept[0] == writes and time.monotonic() - kept[1] < max_age_s:
            return list(kept[2])
        read_at = time.monotonic()
        channels = self.list_channels()
        self._kept = (writes, read_at, channels)
        return list(channels)

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
        key_env_pattern: str = KEY_ENV_PATTERN,
        price_input: float | None = None,
        price_output: float | None = None,
    ) -> ChannelConfig:
        _check_sizes(name, model, base_url, api_key, api_key_env)
        _check_fields(provider, api_key, api_key_env, base_url, key_env_pattern)
        prices = _prices(price_input, price_output)
        if default and not auxiliary:
            raise InvalidRequest("only an auxiliary channel can be the default one")
        with self._write() as session:
            _check_name(session, name)
            row = ModelChannel(
                name=name,
                provider=provider,
                model=model,
                base_url=base_url,
                api_key=api_key,
                api_key_env=api_key_env,
                is_auxiliary=auxiliary,
                **prices,
            )
            session.add(row)
            session.flush()
            if default:
                _set_default(session, row.id)
            return channel_config(row)

    def list_channels(self) -> list[ChannelConfig]:
        with read_session(self.factory) as session:
            rows = session.scalars(select(ModelChannel).order_by(ModelChannel.id))
            return [channel_config(r) for r in rows]

    def get_channel(self, channel: ChannelRef) -> ChannelConfig:
        with read_session(self.factory) as session:
            return channel_config(find_channel(session, channel))

    def default_channel_id(self) -> int | None:
        with read_session(self.factory) as session:
            return default_channel_id(session)

    def set_default_channel(self, channel: ChannelRef) -> ChannelConfig:
        """Make an auxiliary channel the system's default one."""
        with self._write() as session:
            row = find_channel(session, channel)
            if not row.is_auxiliary:
                raise InvalidRequest(f"channel {row.name!r} is not an auxiliary channel")
            _set_default(session, row.id)
            return channel_config(row)

    def edit_channel(
        self,
        channel: ChannelRef,
        *,
        name: str | None = None,
        provider: str | None = None,
        model: str | None = None,
        base_url: str | None = None,
        clear_base_url: bool = False,
        api_key: str | None = None,
        api_key_env: str | None = None,
        clear_api_key: bool = False,
        auxiliary: bool | None = None,
        force: bool = False,
        key_env_pattern: str = KEY_ENV_PATTERN,
        price_input: float | None = None,
        price_output: float | None = None,
        clear_prices: bool = False,
    ) -> ChannelChange:
        """Change what is given. A new key replaces the variable and a new variable the key;
        ``clear_api_key`` leaves neither. A new base URL or provider is refused unless the key
        is given again or cleared. Unmarking auxiliary a channel an agent uses, or the default
        one, is refused unless ``force`` (see ``remove_channel``)."""
        _check_sizes(name, model, base_url, api_key, api_key_env)
        _check_fields(provider, api_key, api_key_env, base_url, key_env_pattern)
        if (api_key or api_key_env) and clear_api_key:
            raise InvalidRequest("set the key or clear it, not both")
        if base_url is not None and clear_base_url:
            raise InvalidRequest("set the base URL or clear it, not both")
        fields = {"name": name, "provider": provider, "model": model, "base_url": base_url}
        given: dict[str, str | None] = {k: v for k, v in fields.items() if v is not None}
        if clear_base_url:
            given["base_url"] = None
        if api_key or api_key_env or clear_api_key:
            given |= {"api_key": api_key or None, "api_key_env": api_key_env or None}
        prices = _prices(price_input, price_output, clear_prices)
        if not given and auxiliary is None and not prices:
            raise InvalidRequest("nothing to change")
        with self._write() as session:
            row = find_channel(session, channel)
            if name is not None:
                _check_name(session, name, row)
            url = given.get("base_url", row.base_url)
            _refuse_new_destination(row, provider, url, "api_key" in given)
            change = ChannelChange(channel_config(row))
            if auxiliary is False and row.is_auxiliary:
                use = _Use(session, row)
                use.refuse_unless(force, "stays auxiliary", "unmarks it")
                change = use.release(session)
            for field, value in {**given, **prices}.items():
                setattr(row, field, value)
            if auxiliary is not None:
                row.is_auxiliary = auxiliary
            session.flush()
            return replace(change, channel=channel_config(row))

    def remove_channel(self, channel: ChannelRef, *, force: bool = False) -> ChannelChange:
        """Delete a channel. Refused while an agent uses it (to summarize or to chat) or it is
        the default, unless ``force``: then those agents fall back to the default channel, their
        chat turns to the system's rule, and the default entry goes if it was this one."""
        with self._write() as session:
            row = find_channel(session, channel)
            use = _Use(session, row, chats=True)
            use.refuse_unless(force, "is not removed", "removes it")
            change = use.release(session)
            session.delete(row)
            return change
