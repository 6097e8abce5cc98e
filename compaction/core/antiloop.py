"""Anti-loop (docs/architecture.md, "The algorithm"): a session whose last two compactions each
saved under 10% is not auto-compacted again until it grows by 10% over what the last one left.
Manual requests run."""

from __future__ import annotations

from collections.abc import Sequence

MIN_SAVING = 0.10
MIN_GROWTH = 0.10


def suppressed(recent: Sequence[tuple[int, int]], current_tokens: int) -> bool:
    """``recent``: (tokens_before, tokens_after) of the succeeded compactions, oldest first."""
    last_two = list(recent)[-2:]
    if len(last_two) < 2 or any(before <= 0 for before, _ in last_two):
        return False
    weak = all((before - after) / before < MIN_SAVING for before, after in last_two)
    return weak and current_tokens <= last_two[-1][1] * (1 + MIN_GROWTH)
