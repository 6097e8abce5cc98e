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
import os
import time
from collections.abc import Iterator, Mapping
from dataclasses import replace

from pydantic import SecretStr
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from compaction.core.errors import CompactionError, Conflict, InvalidRequest, NotFound
from compaction.store.channel_checks import (
    KEY_ENV_PATTERN,
    check_fields,
    check_sizes,
    key_env_allowed,
    key_env_rule,
    price_columns,
    refuse_new_destination,
)
from compaction.store.channel_use import (
    ChannelChange,
    ChannelUse,
    channel_config,
    default_channel_id,
    set_default,
)
from compaction.store.db import Repository, read_session, write_session
from compaction.store.models import ModelChannel
from compaction.store.records import ChannelConfig

#: a channel's id, or its name (digits that name no channel are an id)
ChannelRef = int | str


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
            f"({key_env_rule(key_env_pattern)}): give it its key again"
        )
    value = (os.environ if environ is None else environ).get(config.api_key_env)
    if not value:
        raise missing(
            f"channel {config.name!r} reads its key from {config.api_key_env}, which is not set"
        )
    return replace(config, api_key=SecretStr(value))


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


def _check_name(session: Session, name: str, row: ModelChannel | None = None) -> None:
    found = session.scalar(select(ModelChannel.id).where(ModelChannel.name == name))
    if found is not None and (row is None or found != row.id):
        raise Conflict(f"a channel named {name!r} exists already")


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
        check_sizes(name, model, base_url, api_key, api_key_env)
        check_fields(provider, api_key, api_key_env, base_url, key_env_pattern)
        prices = price_columns(price_input, price_output)
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
                set_default(session, row.id)
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
            set_default(session, row.id)
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
        check_sizes(name, model, base_url, api_key, api_key_env)
        check_fields(provider, api_key, api_key_env, base_url, key_env_pattern)
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
        prices = price_columns(price_input, price_output, clear_prices)
        if not given and auxiliary is None and not prices:
            raise InvalidRequest("nothing to change")
        with self._write() as session:
            row = find_channel(session, channel)
            if name is not None:
                _check_name(session, name, row)
            url = given.get("base_url", row.base_url)
            refuse_new_destination(row, provider, url, "api_key" in given)
            change = ChannelChange(channel_config(row))
            if auxiliary is False and row.is_auxiliary:
                use = ChannelUse(session, row)
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
            use = ChannelUse(session, row, chats=True)
            use.refuse_unless(force, "is not removed", "removes it")
            change = use.release(session)
            session.delete(row)
            return change
