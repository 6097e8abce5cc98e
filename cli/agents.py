"""``agent set|show``: per-agent compaction settings (docs/architecture.md, "Settings"). A value
left blank, or cleared, is the system's: both commands say where each value comes from."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from compaction.cli.common import open_store, print_json
from compaction.core.config import (
    AUTO_COMPACT_MODES,
    PROTECT_FIRST_N_MAX,
    PROTECT_FIRST_N_MIN,
    STRATEGIES,
    THRESHOLD_PERCENT_MAX,
    THRESHOLD_PERCENT_MIN,
    THRESHOLD_PERCENT_STEP,
    TOKEN_BUDGET_MIN,
    WARN_PERCENT_MAX,
    WARN_PERCENT_MIN,
    WARN_POINTS_BELOW,
)
from compaction.core.contract import CONTEXT_WINDOW_MAX, CONTEXT_WINDOW_MIN
from compaction.producers.views import agent_view, show_agent
from compaction.service.context import check_warn_level
from compaction.service.settings import Settings
from compaction.store import Store

#: ``--chat-channel none`` clears the agent's chat channel
NONE = "none"


def register(commands: Any) -> None:
    agent = commands.add_parser("agent", help="per-agent compaction settings")
    actions = agent.add_subparsers(dest="action", required=True, metavar="ACTION")
    put = actions.add_parser("set", help="create or update an agent's settings")
    put.add_argument("agent")
    threshold = put.add_mutually_exclusive_group()
    threshold.add_argument(
        "--threshold",
        type=int,
        help=f"percent of the window, {THRESHOLD_PERCENT_MIN}-{THRESHOLD_PERCENT_MAX} "
        f"by {THRESHOLD_PERCENT_STEP}",
    )
    threshold.add_argument(
        "--clear-threshold", action="store_true", help="use COMPACTION_THRESHOLD_PERCENT"
    )
    head = put.add_mutually_exclusive_group()
    head.add_argument(
        "--protect-first-n",
        type=int,
        help=f"protected head, {PROTECT_FIRST_N_MIN}-{PROTECT_FIRST_N_MAX}",
    )
    head.add_argument(
        "--clear-protect-first-n", action="store_true", help="use COMPACTION_PROTECT_FIRST_N"
    )
    budget = put.add_mutually_exclusive_group()
    budget.add_argument(
        "--token-budget",
        type=int,
        help=f"a fixed threshold in tokens (at least {TOKEN_BUDGET_MIN}, capped at the window) "
        "instead of the percentage",
    )
    budget.add_argument(
        "--clear-token-budget", action="store_true", help="use COMPACTION_TOKEN_BUDGET"
    )
    put.add_argument("--strategy", help=f"one of: {', '.join(STRATEGIES)}")
    aux = put.add_mutually_exclusive_group()
    aux.add_argument("--auxiliary-channel", help="channel id or name")
    aux.add_argument(
        "--clear-auxiliary-channel", action="store_true", help="use the default channel"
    )
    _gate_options(put)
    put.add_argument(
        "--chat-channel",
        metavar="NAME",
        help=f"the channel (id or name, not auxiliary) that answers chat turns; {NONE!r}: the "
        "gateway's rule",
    )
    put.add_argument("--model")
    put.add_argument(
        "--context-window", type=int, help=f"tokens, {CONTEXT_WINDOW_MIN}-{CONTEXT_WINDOW_MAX}"
    )
    put.add_argument("--json", action="store_true")
    put.set_defaults(run=run_agent_set)
    show = actions.add_parser("show", help="an agent's settings and where each comes from")
    show.add_argument("agent")
    show.add_argument("--json", action="store_true")
    show.set_defaults(run=run_agent_show)


def _gate_options(put: argparse.ArgumentParser) -> None:
    """The gate's options (docs/architecture.md, "The gate")."""
    mode = put.add_mutually_exclusive_group()
    mode.add_argument(
        "--auto-compact",
        choices=AUTO_COMPACT_MODES,
        help="over the threshold: on compacts, ask asks the user, off waits for /compact (a "
        "call that would not fit the window is compacted first in every mode)",
    )
    mode.add_argument(
        "--clear-auto-compact", action="store_true", help="use COMPACTION_AUTO_COMPACT"
    )
    warn = put.add_mutually_exclusive_group()
    warn.add_argument(
        "--warn-percent",
        type=int,
        help=f"the warning level, {WARN_PERCENT_MIN}-{WARN_PERCENT_MAX} percent of the window, "
        f"below the threshold (default: {WARN_POINTS_BELOW} points below it)",
    )
    warn.add_argument(
        "--clear-warn-percent", action="store_true", help="use COMPACTION_WARN_PERCENT"
    )


def _chat_channel(store: Store, name: str | None) -> tuple[int | None, bool]:
    """``--chat-channel``: (the channel's id, whether it is cleared)."""
    if name is None:
        return None, False
    if name.lower() == NONE:
        return None, True
    return store.get_channel(name).id, False


def run_agent_set(args: argparse.Namespace, out: TextIO | None = None) -> int:
    settings = Settings()
    store = open_store(settings)
    channel = args.auxiliary_channel
    chat_channel, clear_chat_channel = _chat_channel(store, args.chat_channel)
    agent = store.set_agent(
        args.agent,
        threshold_percent=args.threshold,
        clear_threshold=args.clear_threshold,
        protect_first_n=args.protect_first_n,
        clear_protect_first_n=args.clear_protect_first_n,
        token_budget=args.token_budget,
        clear_token_budget=args.clear_token_budget,
        strategy=args.strategy,
        auxiliary_channel_id=store.get_channel(channel).id if channel is not None else None,
        clear_auxiliary_channel=args.clear_auxiliary_channel,
        model=args.model,
        context_window=args.context_window,
        auto_compact=args.auto_compact,
        clear_auto_compact=args.clear_auto_compact,
        warn_percent=args.warn_percent,
        clear_warn_percent=args.clear_warn_percent,
        chat_channel_id=chat_channel,
        clear_chat_channel=clear_chat_channel,
        check=lambda agent: check_warn_level(settings, agent),
    )
    _print_agent(agent_view(settings, store, agent), args.json, out)
    return 0


def run_agent_show(args: argparse.Namespace, out: TextIO | None = None) -> int:
    settings = Settings()
    store = open_store(settings)
    _print_agent(show_agent(settings, store, args.agent), args.json, out)
    return 0


def _origin(item: dict[str, Any]) -> str:
    if item["source"] == "agent":
        return "the agent's own"
    return f"the system setting {item['setting']}={item['value']}"


def _budget_text(item: dict[str, Any]) -> str:
    if item["value"] is None:
        return f"none: the threshold percent of the window ({item['setting']} unset)"
    return f"{item['value']:,} tokens, capped at the window ({_origin(item)})"


def _warn_text(item: dict[str, Any]) -> str:
    if item["value"] is None:
        return f"{WARN_POINTS_BELOW} points below the threshold ({item['setting']} unset)"
    return f"{item['value']}% ({_origin(item)})"


def _chat_text(item: dict[str, Any] | None) -> str:
    if item is None:
        return "none of its own: the gateway's rule"
    name = repr(item["name"]) if item["name"] else "(missing)"
    return f"channel {name} (id {item['id']}), the agent's own"


def _auxiliary_text(item: dict[str, Any]) -> str:
    if item["source"] == "none":
        return "none: no channel of its own and no default (compaction fails: no_auxiliary_model)"
    where = "the agent's own" if item["source"] == "agent" else "the default channel"
    name = f"{item['name']!r} (id {item['id']})" if item["name"] else f"id {item['id']} (missing)"
    usable = "" if item["auxiliary"] else ", not an auxiliary channel: compaction fails"
    return f"channel {name}, {where}{usable}"


def _print_agent(row: dict[str, Any], as_json: bool, out: TextIO | None) -> None:
    if as_json:
        print_json(row, out)
        return
    effective = row["effective"]
    threshold, head = effective["thresholdPercent"], effective["protectFirstN"]
    lines = [
        f"agent {row['id']}",
        f"  threshold       {threshold['value']}% ({_origin(threshold)})",
        f"  protected head  {head['value']} ({_origin(head)})",
        f"  token budget    {_budget_text(effective['tokenBudget'])}",
        f"  auxiliary       {_auxiliary_text(effective['auxiliaryChannel'])}",
        f"  auto compact    {effective['autoCompact']['value']} "
        f"({_origin(effective['autoCompact'])})",
        f"  warning at      {_warn_text(effective['warnPercent'])}",
        f"  chat channel    {_chat_text(row['chatChannel'])}",
        f"  strategy        {row['compactionStrategy']}",
        f"  model           {row['model'] or '-'}",
        f"  window          {row['contextWindow'] or 'from the model'}",
    ]
    print("\n".join(lines), file=out)
