"""The anti-loop rule (docs/architecture.md, "The algorithm"): two weak compactions in a row
stop auto requests until the session grows by 10% over what the last one left."""

from __future__ import annotations

import pytest

from compaction.core.antiloop import suppressed


@pytest.mark.parametrize(
    ("recent", "current", "expected"),
    [
        ([], 10_000, False),  # no history
        ([(10_000, 9_500)], 9_500, False),  # one weak run is not a loop
        ([(10_000, 9_500), (9_600, 9_200)], 9_300, True),  # two weak runs, no growth
        ([(10_000, 9_500), (9_600, 9_200)], 9_200 * 1.1, True),  # growth exactly 10%: still
        ([(10_000, 9_500), (9_600, 9_200)], 10_200, False),  # grown past 10%
        ([(10_000, 5_000), (9_600, 9_200)], 9_300, False),  # the earlier run saved 50%
        ([(10_000, 9_500), (9_600, 4_000)], 4_100, False),  # the latest run saved 58%
        ([(10_000, 9_000), (9_600, 8_640)], 8_700, False),  # exactly 10% saved is not weak
        ([(10_000, 2_000), (10_000, 9_500), (9_600, 9_200)], 9_300, True),  # last two count
        ([(0, 0), (9_600, 9_200)], 9_300, False),  # a run without figures
    ],
)
def test_suppressed(recent: list[tuple[int, int]], current: float, expected: bool) -> None:
    assert suppressed(recent, int(current)) is expected
