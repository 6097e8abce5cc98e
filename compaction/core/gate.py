"""The gate before an automatic compaction (docs/architecture.md, "The gate"): the warning level
below the threshold, the estimate of turns left, and the ``warning`` a ``token_update`` carries.

Pure: the service passes the session's figures and its recent turns' sizes. The skip/stage
decision itself, ``autoCompact`` included, stays in ``compaction.core.decision``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from compaction.core.config import WARN_POINTS_BELOW
from compaction.core.contract import AutoCompact, ContextWarning

#: how many of the latest turns' growths the estimate of turns left averages
GROWTH_TURNS = 5


def warn_tokens(window: int, threshold_tokens: int, warn_percent: int | None) -> int:
    """The warning level in tokens: ``warn_percent`` of the window when set, else
    ``WARN_POINTS_BELOW`` points of the window below the threshold (a fixed token budget's too);
    never above the threshold, never below zero."""
    if warn_percent is None:
        level = threshold_tokens - window * WARN_POINTS_BELOW // 100
    else:
        level = window * warn_percent // 100
    return max(0, min(level, threshold_tokens))


def hard_limit_reached(used_tokens: int, window: int) -> bool:
    """The call would not fit the model's window: the context (the new message included)
    reaches it. Every ``autoCompact`` mode compacts first then (docs/architecture.md,
    "The gate")."""
    return used_tokens >= window


def mean_growth(totals_newest_first: Sequence[int], turns: int = GROWTH_TURNS) -> float | None:
    """The mean growth per turn of the latest ``turns`` turns, from the tokens each call sent
    (newest first). A drop (a compaction between two calls) is no growth and is left out;
    ``None`` when no growth is known."""
    oldest_first = list(reversed(totals_newest_first[: turns + 1]))
    growths = [b - a for a, b in itertools.pairwise(oldest_first) if b > a]
    if not growths:
        return None
    return sum(growths) / len(growths)


def turns_left(used_tokens: int, target_tokens: int, growth: float | None) -> int | None:
    """About how many turns until the context reaches ``target_tokens`` at ``growth`` tokens a
    turn (the turn that reaches it counts); ``None`` when the growth is unknown."""
    if growth is None or growth <= 0:
        return None
    return max(0, math.ceil((target_tokens - used_tokens) / growth))


def target_tokens(used_tokens: int, threshold: int, window: int, mode: AutoCompact) -> int:
    """Where the next automatic compaction happens: the threshold (``on``, and ``ask`` below
    it), else the hard limit (the window)."""
    if mode == "off" or used_tokens >= threshold:
        return window
    return threshold


def context_warning(
    *,
    used_tokens: int,
    window: int,
    threshold_tokens: int,
    warn_percent: int | None,
    mode: AutoCompact,
    growth: float | None,
) -> ContextWarning | None:
    """The ``warning`` of a ``token_update``: ``None`` below the warning level. ``due`` when
    the threshold is reached in ``ask`` mode (the user is asked to compact)."""
    if used_tokens < warn_tokens(window, threshold_tokens, warn_percent):
        return None
    target = target_tokens(used_tokens, threshold_tokens, window, mode)
    return ContextWarning(
        percent=round(min(100.0, 100 * used_tokens / window), 1),
        threshold=round(100 * threshold_tokens / window, 1),
        turns_left=turns_left(used_tokens, target, growth),
        mode=mode,
        due=mode == "ask" and used_tokens >= threshold_tokens,
    )
