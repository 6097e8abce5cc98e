"""``channel add|list|edit|default|remove``: model channels (docs/architecture.md, "Settings").
Keys are write-only: shown masked, or as the variable that holds them. Which variables a channel
may read, a base URL, and a new destination's key: store/channels.py."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from compaction.cli.common import open_store, print_json
from compaction.producers.views import channel_row
from compaction.service.settings import Settings
from compaction.store.channel_use import ChannelChange
from compaction.store.models import PROVIDERS


def register(commands: Any) -> None:
    channel = commands.add_parser("channel", help="model channels (auxiliary models)")
    actions = channel.add_subparsers(dest="action", required=True, metavar="ACTION")
    add = actions.add_parser("add", help="add a channel")
    add.add_argument("name")
    add.add_argument("--provider", required=True, choices=PROVIDERS)
    add.add_argument("--model", required=True)
    add.add_argument("--base-url")
    _key_options(add)
    add.add_argument("--auxiliary", action="store_true", help="may write summaries")
    add.add_argument("--default", action="store_true", help="the system's default auxiliary")
    _price_options(add)
    add.set_defaults(run=run_channel_add)

    listing = actions.add_parser("list", help="list channels (keys masked)")
    listing.set_defaults(run=run_channel_list)

    edit = actions.add_parser("edit", help="change a channel")
    edit.add_argument("channel", help="id or name")
    edit.add_argument("--name")
    edit.add_argument("--provider", choices=PROVIDERS)
    edit.add_argument("--model")
    url = edit.add_mutually_exclusive_group()
    url.add_argument("--base-url")
    url.add_argument("--clear-base-url", action="store_true")
    key = _key_options(edit)
    key.add_argument("--clear-api-key", action="store_true", help="forget the key or variable")
    aux = edit.add_mutually_exclusive_group()
    aux.add_argument("--auxiliary", action="store_true", default=None, help="may write summaries")
    aux.add_argument("--no-auxiliary", dest="auxiliary", action="store_false")
    _force_option(edit, "unmark it even if agents use it or it is the default")
    _price_options(edit).add_argument(
        "--clear-prices", action="store_true", help="no prices: its runs' cost is null"
    )
    edit.set_defaults(run=run_channel_edit)

    default = actions.add_parser("default", help="make an auxiliary channel the default")
    default.add_argument("channel", help="id or name")
    default.set_defaults(run=run_channel_default)

    remove = actions.add_parser("remove", help="delete a channel")
    remove.add_argument("channel", help="id or name")
    _force_option(remove, "remove it even if agents use it or it is the default")
    remove.set_defaults(run=run_channel_remove)
    for parser in (add, listing, edit, default, remove):
        parser.add_argument("--json", action="store_true")


def _key_options(parser: argparse.ArgumentParser) -> Any:
    key = parser.add_mutually_exclusive_group()
    key.add_argument("--api-key", help="stored in the database (shown masked)")
    key.add_argument(
        "--api-key-env",
        help="the environment variable that holds the key: one matching "
        "COMPACTION_CHANNEL_KEY_ENV_PATTERN (by default a name ending in _API_KEY), never a "
        "COMPACTION_ one",
    )
    return key


def _price_options(parser: argparse.ArgumentParser) -> Any:
    """A run's cost (docs/architecture.md, "Receipt"): the auxiliary model's tokens priced."""
    prices = parser.add_argument_group("prices (USD per million tokens; a run's cost)")
    prices.add_argument("--price-input", type=float, metavar="USD", help="per million input tokens")
    prices.add_argument(
        "--price-output", type=float, metavar="USD", help="per million output tokens"
    )
    return prices


def _force_option(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--force", action="store_true", help=f"{what}: its agents fall back to the default"
    )


def _describe(row: dict[str, Any]) -> str:
    roles = [r for r in ("auxiliary", "default") if row[r]]
    priced = row.get("priceInput") is not None or row.get("priceOutput") is not None
    prices = f" ${row['priceInput'] or 0:g} in / ${row['priceOutput'] or 0:g} out per Mtok"
    return (
        f"channel {row['id']} {row['name']!r}: {row['provider']} {row['model']}"
        f"{' (' + ', '.join(roles) + ')' if roles else ''}{prices if priced else ''}"
    )


def run_channel_add(args: argparse.Namespace, out: TextIO | None = None) -> int:
    settings = Settings()
    store = open_store(settings)
    channel = store.add_channel(
        args.name,
        provider=args.provider,
        model=args.model,
        base_url=args.base_url,
        api_key=args.api_key,
        api_key_env=args.api_key_env,
        auxiliary=args.auxiliary,
        default=args.default,
        key_env_pattern=settings.channel_key_env_pattern,
        price_input=args.price_input,
        price_output=args.price_output,
    )
    row = channel_row(channel, store.default_channel_id())
    if args.json:
        print_json(row, out)
    else:
        print(_describe(row), file=out)
    return 0


def run_channel_list(args: argparse.Namespace, out: TextIO | None = None) -> int:
    store = open_store()
    default_id = store.default_channel_id()
    rows = [channel_row(c, default_id) for c in store.list_channels()]
    if args.json:
        print_json(rows, out)
        return 0
    print(f"{'ID':>4} {'NAME':<20} {'PROVIDER':<18} {'MODEL':<28} {'KEY':<14} ROLE", file=out)
    for row in rows:
        key = row["apiKey"] or (f"${row['apiKeyEnv']}" if row["apiKeyEnv"] else "-")
        roles = ", ".join(f for f in ("auxiliary", "default") if row[f]) or "-"
        print(
            f"{row['id']:>4} {row['name']:<20} {row['provider']:<18} {row['model']:<28} "
            f"{key:<14} {roles}",
            file=out,
        )
    chosen = [row for row in rows if row["default"]]
    print(
        f"default auxiliary channel: {chosen[0]['name']!r} (id {chosen[0]['id']})"
        if chosen
        else "no default auxiliary channel (compaction channel default CHANNEL sets one)",
        file=out,
    )
    return 0


def run_channel_edit(args: argparse.Namespace, out: TextIO | None = None) -> int:
    settings = Settings()
    store = open_store(settings)
    change = store.edit_channel(
        args.channel,
        name=args.name,
        provider=args.provider,
        model=args.model,
        base_url=args.base_url,
        clear_base_url=args.clear_base_url,
        api_key=args.api_key,
        api_key_env=args.api_key_env,
        clear_api_key=args.clear_api_key,
        auxiliary=args.auxiliary,
        force=args.force,
        key_env_pattern=settings.channel_key_env_pattern,
        price_input=args.price_input,
        price_output=args.price_output,
        clear_prices=args.clear_prices,
    )
    _print_change(change, store.default_channel_id(), args.json, "edited", out)
    return 0


def run_channel_default(args: argparse.Namespace, out: TextIO | None = None) -> int:
    store = open_store()
    channel = store.set_default_channel(args.channel)
    row = channel_row(channel, channel.id)
    if args.json:
        print_json(row, out)
    else:
        print(f"{_describe(row)}: the default auxiliary channel now", file=out)
    return 0


def run_channel_remove(args: argparse.Namespace, out: TextIO | None = None) -> int:
    store = open_store()
    change = store.remove_channel(args.channel, force=args.force)
    _print_change(change, None, args.json, "removed", out)
    return 0


def _print_change(
    change: ChannelChange, default_id: int | None, as_json: bool, done: str, out: TextIO | None
) -> None:
    row = channel_row(change.channel, default_id)
    if as_json:
        default = channel_row(change.default, change.default.id) if change.default else None
        print_json(
            {
                "channel": row,
                "agentsNowOnDefault": list(change.released_agents),
                "chatAgentsReleased": list(change.released_chats),
                "defaultCleared": change.default_cleared,
                "defaultChannel": default,
            },
            out,
        )
        return
    print(f"{done} {_describe(row)}", file=out)
    for line in consequences(change):
        print(line, file=out)


def consequences(change: ChannelChange) -> list[str]:
    """What an edit or a removal did to the agents and to the default, in words."""
    lines = []
    if agents := change.released_agents:
        one = len(agents) == 1
        who = f"{'agent' if one else 'agents'} {', '.join(agents)} now"
        default = change.default
        lines.append(
            f"{who} {'uses' if one else 'use'} the default channel {default.name!r} "
            f"(id {default.id})"
            if default
            else f"{who} {'has' if one else 'have'} no auxiliary channel: there is no default one"
        )
    if change.default_cleared:
        lines.append(
            "there is no default auxiliary channel now (compaction channel default CHANNEL)"
        )
    if chats := change.released_chats:
        lines.append(
            f"{'agent' if len(chats) == 1 else 'agents'} {', '.join(chats)}: no chat channel "
            "now (the system's rule answers; agent set --chat-channel)"
        )
    return lines
