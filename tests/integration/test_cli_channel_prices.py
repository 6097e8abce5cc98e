"""``compaction channel add|edit --price-input X --price-output Y`` (docs/architecture.md,
"Receipt"): a channel's prices per million tokens, shown by ``channel list --json`` and the
add/edit line; ``--clear-prices`` forgets them; a negative or absurd price is refused with one
line."""

from __future__ import annotations

import json
from collections.abc import Callable

Command = Callable[..., tuple[int, str, str]]
ADD = ["channel", "add", "aux", "--provider", "openai", "--model", "gpt-4o-mini", "--auxiliary"]


def _listed(command: Command) -> dict[str, object]:
    status, out, _ = command("channel", "list", "--json")
    assert status == 0
    [row] = json.loads(out)
    return dict(row)


def test_prices_through_the_command_line(command: Command) -> None:
    status, out, err = command(*ADD, "--price-input", "3", "--price-output", "15")
    assert (status, err) == (0, ""), err
    assert "$3 in / $15 out per Mtok" in out
    row = _listed(command)
    assert (row["priceInput"], row["priceOutput"]) == (3.0, 15.0)

    status, out, err = command("channel", "edit", "aux", "--price-output", "12.5", "--json")
    assert (status, err) == (0, ""), err
    assert json.loads(out)["channel"]["priceOutput"] == 12.5
    assert _listed(command)["priceInput"] == 3.0  # left as it was

    status, out, err = command("channel", "edit", "aux", "--clear-prices")
    assert (status, err) == (0, ""), err
    row = _listed(command)
    assert (row["priceInput"], row["priceOutput"]) == (None, None)
    assert "per Mtok" not in out


def test_bad_prices_are_refused_in_one_line(command: Command) -> None:
    assert command(*ADD)[0] == 0
    for argv in (
        ["--price-input", "-1"],
        ["--price-output", "1e9"],
        ["--price-input", "nan"],
        ["--price-input", "2", "--clear-prices"],
    ):
        status, out, err = command("channel", "edit", "aux", *argv)
        assert (status, out) == (1, ""), argv
        assert err.startswith("compaction: error [invalid_request]: "), err
        assert err.count("\n") == 1
    row = _listed(command)
    assert (row["priceInput"], row["priceOutput"]) == (None, None)  # nothing stored
