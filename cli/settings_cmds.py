"""``channel add|list`` (auxiliary model channels) and ``agent set|show`` (per-agent settings)."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from cli.common import open_store, print_json
from compaction.config import (
    PROTECT_FIRST_N_MAX,
    PROTECT_FIRST_N_MIN,
    STRATEGIES,
    THRESHOLD_PERCENT_MAX,
    THRESHOLD_PERCENT_MIN,
    THRESHOLD_PERCENT_STEP,
)
from compaction.contract import CONTEXT_WINDOW_MAX, CONTEXT_WINDOW_MIN
from compaction.errors import InvalidRequest
from store.models import PROVIDERS
from store.records import ChannelConfig, mask, mask_url


def register(commands: Any) -> None:
    channel = commands.add_parser("channel", help="auxiliary model channels")
    actions = channel.add_subparsers(dest="action", required=True, metavar="ACTION")
    add = actions.add_parser("add", help="add a channel")
    add.add_argument("name")
    add.add_argument("--provider", required=True, choices=PROVIDERS)
    add.add_argument("--model", required=True)
    add.add_argument("--base-url")
    key = add.add_mutually_exclusive_group()
    key.add_argument("--api-key", help="stored in the database (shown masked)")
    key.add_argument("--api-key-env", help="the environment variable that holds the key")
    add.add_argument("--auxiliary", action="store_true", help="may write summaries")
    add.add_argument("--default", action="store_true", help="the system's default auxiliary")
    add.add_argument("--json", action="store_true")
    add.set_defaults(run=run_channel_add)
    listing = actions.add_parser("list", help="list channels (keys masked)")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(run=run_channel_list)

    agent = commands.add_parser("agent", help="per-agent compaction settings")
    agent_actions = agent.add_subparsers(dest="action", required=True, metavar="ACTION")
    put = agent_actions.add_parser("set", help="create or update an agent's settings")
    put.add_argument("agent")
    put.add_argument(
        "--threshold",
        type=int,
        help=f"percent of the window, {THRESHOLD_PERCENT_MIN}-{THRESHOLD_PERCENT_MAX} "
        f"by {THRESHOLD_PERCENT_STEP}",
    )
    put.add_argument(
        "--protect-first-n",
        type=int,
        help=f"protected head, {PROTECT_FIRST_N_MIN}-{PROTECT_FIRST_N_MAX}",
    )
    put.add_argument("--strategy", help=f"one of: {', '.join(STRATEGIES)}")
    aux = put.add_mutually_exclusive_group()
    aux.add_argument("--auxiliary-channel", type=int, help="channel id")
    aux.add_argument("--clear-auxiliary-channel", action="store_true")
    put.add_argument("--model")
    put.add_argument(
        "--context-window", type=int, help=f"tokens, {CONTEXT_WINDOW_MIN}-{CONTEXT_WINDOW_MAX}"
    )
    put.add_argument("--json", action="store_true")
    put.set_defaults(run=run_agent_set)
    show = agent_actions.add_parser("show", help="an agent's settings")
    show.add_argument("agent")
    show.add_argument("--json", action="store_true")
    show.set_defaults(run=run_agent_show)


def channel_row(channel: ChannelConfig, default_id: int | None) -> dict[str, Any]:
    key = channel.api_key.get_secret_value() if channel.api_key else None
    return {
        "id": channel.id,
        "name": channel.name,
        "provider": channel.provider,
        "model": channel.model,
        "baseUrl": mask_url(channel.base_url) if channel.base_url else None,
        "apiKey": mask(key) if key else None,
        "apiKeyEnv": channel.api_key_env,
        "auxiliary": channel.is_auxiliary,
        "default": channel.id == default_id,
    }


def run_channel_add(args: argparse.Namespace, out: TextIO | None = None) -> int:
    store = open_store()
    channel = store.add_channel(
        args.name,
        provider=args.provider,
        model=args.model,
        base_url=args.base_url,
        api_key=args.api_key,
        api_key_env=args.api_key_env,
        auxiliary=args.auxiliary,
        default=args.default,
    )
    row = channel_row(channel, store.default_channel_id())
    if args.json:
        print_json(row, out)
    else:
        print(
            f"channel {row['id']} {row['name']}: {row['provider']} {row['model']}"
            f"{' (auxiliary)' if row['auxiliary'] else ''}"
            f"{' (default)' if row['default'] else ''}",
            file=out,
        )
    return 0


def run_channel_list(args: argparse.Namespace, out: TextIO | None = None) -> int:
    store = open_store()
    default_id = store.default_channel_id()
    rows = [channel_row(c, default_id) for c in store.list_channels()]
    if args.json:
        print_json(rows, out)
        return 0
    for row in rows:
        key = row["apiKey"] or (f"${row['apiKeyEnv']}" if row["apiKeyEnv"] else "-")
        flags = ",".join(f for f in ("auxiliary", "default") if row[f]) or "-"
        print(
            f"{row['id']:>4} {row['name']:<20} {row['provider']:<18} {row['model']:<28} "
            f"{key:<14} {flags}",
            file=out,
        )
    return 0


def _agent_row(settings: Any) -> dict[str, Any]:
    return {
        "id": settings.id,
        "model": settings.model,
        "contextWindow": settings.context_window,
        "auxiliaryModelChannelId": settings.auxiliary_model_channel_id,
        "compactionStrategy": settings.compaction_strategy,
        "compactionThresholdPercent": settings.compaction_threshold_percent,
        "compactionProtectFirstN": settings.compaction_protect_first_n,
    }


def run_agent_set(args: argparse.Namespace, out: TextIO | None = None) -> int:
    settings = open_store().set_agent(
        args.agent,
        threshold_percent=args.threshold,
        protect_first_n=args.protect_first_n,
        strategy=args.strategy,
        auxiliary_channel_id=args.auxiliary_channel,
        clear_auxiliary_channel=args.clear_auxiliary_channel,
        model=args.model,
        context_window=args.context_window,
    )
    _print_agent(_agent_row(settings), args.json, out)
    return 0


def run_agent_show(args: argparse.Namespace, out: TextIO | None = None) -> int:
    settings = open_store().get_agent(args.agent)
    if settings is None:
        raise InvalidRequest(f"agent {args.agent!r} not found")
    _print_agent(_agent_row(settings), args.json, out)
    return 0


def _print_agent(row: dict[str, Any], as_json: bool, out: TextIO | None) -> None:
    if as_json:
        print_json(row, out)
        return
    print(
        f"agent {row['id']}: threshold {row['compactionThresholdPercent']}%, protected head "
        f"{row['compactionProtectFirstN']}, strategy {row['compactionStrategy']}, auxiliary "
        f"channel {row['auxiliaryModelChannelId'] or 'default'}, model {row['model'] or '-'}, "
        f"window {row['contextWindow'] or 'from the model'}",
        file=out,
    )
