"""A receipt for every compaction, through the job (docs/architecture.md, "Receipt"): the run
record holds the lists and the cost, ``compaction_done`` the counts, the auxiliary tokens from
the provider's usage (the real SDKs against the loopback server, ``tests/llm_server.py``) and
the cost from the channel's prices; on SQLite and real PostgreSQL, with real Redis."""

from __future__ import annotations

from dataclasses import replace

import pytest

from compaction.core.contract import CompactionDone
from compaction.worker import metrics
from compaction.worker.jobs import run
from tests.fakes import conversation
from tests.integration.worker_helpers import Harness, manual

#: a path only the compacted span holds: the summary's ledger keeps it, the user's instruction
#: around it is folded (the fake model's summary does not quote it)
LOST = "only/in/the/span/notes.txt"


def _session(h: Harness) -> str:
    messages = conversation(12)
    first_user = next(i for i, m in enumerate(messages) if m.role == "user" and i > 1)
    messages[first_user] = replace(
        messages[first_user], content=f"Never edit {LOST}.\nIt is generated."
    )
    return h.session(messages)


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_done_and_run_carry_the_receipt_priced_by_the_channel(h: Harness, provider: str) -> None:
    runtime = h.runtime()
    channel = h.channel(provider)
    h.store.edit_channel(channel.id, price_input=3.0, price_output=15.0)
    h.script()
    session_id = _session(h)

    done = run(runtime, manual(session_id))

    assert isinstance(done, CompactionDone) and done.receipt is not None
    receipt = done.receipt
    assert receipt.identifiers.total > 0
    assert receipt.identifiers.kept == receipt.identifiers.total  # the ledger lists them all
    assert receipt.user_messages.total >= 1
    # the tokens are the provider's: the loopback server's usage, summed over the calls
    usage = h.fake.requests
    assert usage and receipt.aux_tokens is not None
    assert receipt.aux_tokens.input > 0 and receipt.aux_tokens.output > 0
    expected = (receipt.aux_tokens.input * 3.0 + receipt.aux_tokens.output * 15.0) / 1e6
    assert receipt.cost == pytest.approx(expected)
    record = h.store.get_run(done.run_id or 0)
    assert record.cost == pytest.approx(expected)
    assert (record.input_tokens, record.output_tokens) == (
        receipt.aux_tokens.input,
        receipt.aux_tokens.output,
    )
    assert record.receipt is not None
    assert record.receipt["identifiers"]["total"] == receipt.identifiers.total
    assert record.receipt["userMessages"]["total"] == receipt.user_messages.total
    # the wire event as published carries the same counts
    wire = [e for e in h.wire_events() if e["type"] == "compaction_done"][-1]
    assert wire["receipt"]["identifiers"] == {
        "kept": receipt.identifiers.kept,
        "total": receipt.identifiers.total,
    }
    assert wire["receipt"]["cost"] == pytest.approx(expected)


def test_no_price_no_cost_and_a_folded_instruction(h: Harness) -> None:
    # the section of the user's own words off: the instruction is folded into the body
    runtime = h.runtime(user_words_max_tokens=0)
    h.channel("openai")
    h.script()
    session_id = _session(h)

    done = run(runtime, manual(session_id))

    assert isinstance(done, CompactionDone) and done.receipt is not None
    assert done.receipt.cost is None and done.receipt.aux_tokens is not None
    record = h.store.get_run(done.run_id or 0)
    assert record.cost is None and record.receipt is not None
    assert LOST not in record.receipt["identifiers"]["missing"].get("paths", [])
    summary = next(s.message for s in h.store.load_history(session_id) if s.message.is_summary)
    assert LOST in summary.content  # in the ledger, not the body
    folded = record.receipt["userMessages"]["folded"]
    assert f"Never edit {LOST}." in folded
    assert done.receipt.user_messages.verbatim < done.receipt.user_messages.total


def test_metrics_count_tokens_cost_and_identifiers(h: Harness) -> None:
    runtime = h.runtime()
    channel = h.channel("openai")
    h.store.edit_channel(channel.id, price_input=1.0, price_output=2.0)
    h.script()
    series = metrics.job_metrics()
    before = {
        "in": series.aux_tokens.labels("input")._value.get(),
        "total": series.identifiers.labels("total")._value.get(),
        "cost": series.cost._value.get(),
    }
    done = run(runtime, manual(_session(h)))
    assert isinstance(done, CompactionDone) and done.receipt and done.receipt.aux_tokens
    after_in = series.aux_tokens.labels("input")._value.get()
    assert after_in - before["in"] == done.receipt.aux_tokens.input
    added = series.identifiers.labels("total")._value.get() - before["total"]
    assert added == done.receipt.identifiers.total
    assert series.cost._value.get() - before["cost"] == pytest.approx(done.receipt.cost)
