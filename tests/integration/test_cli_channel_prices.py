"""``compaction channel add|edit --price-input X --price-output Y`` (docs/architecture.md,
"Receipt"): a channel's prices per million tokens, shown by ``channel list --json`` and the
add/edit line; ``--clear-prices`` forgets them; a negative or absurd price is refused with one
line; ``compaction stats`` says what the session's compactions cost."""

from __future__ import annotations

import json
from collections.abc import Callable

from compaction import compact, compacted_span, receipt_of
from compaction.store import Store
from compaction.store.records import RunOrigin, compaction_write
from tests.fakes import SMALL, FakeSummarizer, conversation

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


def test_stats_say_what_the_compactions_cost(command: Command, store: Store) -> None:
    """``compaction stats``: the auxiliary tokens and the cost of the session's runs."""
    store.create_session("priced", messages=conversation(12))
    for cost in (0.0125, None):  # a priced run, then an unpriced one: the total is the priced
        view = store.load_history("priced")
        messages = [stored.message for stored in view]
        result = compact(messages, SMALL, FakeSummarizer(usage=(1_000, 200)), reason="manual")
        receipt = receipt_of(compacted_span(messages, result), result)
        version = store.get_session("priced").compaction_version
        origin = RunOrigin(session_id="priced")
        write = compaction_write(view, result, origin, version, receipt=receipt.lists(), cost=cost)
        store.apply_compaction(write)

    status, out, err = command("stats", "priced", "--json")
    assert status == 0, err
    stats = json.loads(out)
    assert stats["compactionCost"] == 0.0125
    assert stats["auxTokens"] == {"input": 2_000, "output": 400}
    status, out, err = command("stats", "priced")
    assert status == 0, err
    assert "compaction: auxiliary model 2,000 in / 400 out tokens, $0.0125" in out
