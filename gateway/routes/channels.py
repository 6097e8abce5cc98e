"""Model channels over HTTP (docs/architecture.md, "Settings"), as ``channel add|list|edit|
default|remove`` manage them. Keys are write-only: every answer shows them masked. A channel
that agents use, or the default one, is neither removed nor unmarked auxiliary without
``?force=true`` (409); forced, those agents fall back to the default channel. Which variables a
channel may read its key from, a base URL, and a new destination's key: store/channels.py."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, status

from compaction.gateway.deps import ProducersDep, StoreDep
from compaction.gateway.responses import Channel, ChannelList, RemovedChannel
from compaction.gateway.schemas import ERRORS, ChannelUpdate, NewChannel
from compaction.producers.views import channel_row

router = APIRouter(tags=["channels"], responses=ERRORS)

ChannelRef = Annotated[str, Path(description="the channel's id or name")]
Force = Annotated[
    bool, Query(description="even if agents use it or it is the default: they fall back")
]


@router.get("/api/channels")
def list_channels(store: StoreDep) -> ChannelList:
    default_id = store.default_channel_id()
    return ChannelList(
        channels=[Channel.of(channel_row(c, default_id)) for c in store.list_channels()]
    )


@router.post("/api/channels", status_code=status.HTTP_201_CREATED)
def add_channel(producers: ProducersDep, body: NewChannel) -> Channel:
    """A taken name is 409; ``default`` needs ``auxiliary``; ``apiKeyEnv`` matches
    ``COMPACTION_CHANNEL_KEY_ENV_PATTERN``; ``baseUrl`` is http or https."""
    store = producers.store
    channel = store.add_channel(
        body.name,
        provider=body.provider,
        model=body.model,
        base_url=body.base_url,
        api_key=body.api_key,
        api_key_env=body.api_key_env,
        auxiliary=body.auxiliary,
        default=body.default,
        key_env_pattern=producers.settings.channel_key_env_pattern,
        price_input=body.price_input,
        price_output=body.price_output,
    )
    return Channel.of(channel_row(channel, store.default_channel_id()))


@router.patch("/api/channels/{channel}")
def edit_channel(
    producers: ProducersDep, channel: ChannelRef, body: ChannelUpdate, force: Force = False
) -> Channel:
    """Change what is given; ``null`` clears the base URL or the key. A new ``baseUrl`` or
    ``provider`` needs ``apiKey`` or ``apiKeyEnv`` again (or ``null``): the stored key never
    goes to a new destination."""
    store = producers.store
    forget_key = body.given("api_key") and body.api_key is None
    forget_env = body.given("api_key_env") and body.api_key_env is None
    change = store.edit_channel(
        channel,
        name=body.name,
        provider=body.provider,
        model=body.model,
        base_url=body.base_url,
        clear_base_url=body.given("base_url") and body.base_url is None,
        api_key=body.api_key,
        api_key_env=body.api_key_env,
        clear_api_key=(forget_key or forget_env) and not (body.api_key or body.api_key_env),
        auxiliary=body.auxiliary,
        force=force,
        key_env_pattern=producers.settings.channel_key_env_pattern,
        price_input=body.price_input,
        price_output=body.price_output,
        clear_prices=_clears_prices(body),
    )
    return Channel.of(channel_row(change.channel, store.default_channel_id()))


def _clears_prices(body: ChannelUpdate) -> bool:
    """``priceInput: null`` or ``priceOutput: null`` with no price given: the channel has
    none (its runs' cost is null)."""
    nulled = any(
        body.given(f) and getattr(body, f) is None for f in ("price_input", "price_output")
    )
    return nulled and body.price_input is None and body.price_output is None


@router.delete("/api/channels/{channel}")
def remove_channel(store: StoreDep, channel: ChannelRef, force: Force = False) -> RemovedChannel:
    """The removed channel, the agents now on the default channel, and whether it was the
    default one."""
    change = store.remove_channel(channel, force=force)
    return RemovedChannel(
        removed=Channel.of(channel_row(change.channel, None)),
        agents=list(change.released_agents),
        default_cleared=change.default_cleared,
        chat_agents=list(change.released_chats),
    )


@router.post("/api/channels/{channel}/default")
def make_default(store: StoreDep, channel: ChannelRef) -> Channel:
    """Make an auxiliary channel the system's default one."""
    made = store.set_default_channel(channel)
    return Channel.of(channel_row(made, made.id))
