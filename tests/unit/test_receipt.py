"""The receipt of a compaction (compaction/core/receipt.py; docs/architecture.md, "Receipt"):
which exact identifiers of the compacted span the result holds, which user messages were folded,
and its wire and JSON forms."""

from __future__ import annotations

import json
from dataclasses import replace

from compaction import compact, compacted_span, receipt_of
from compaction.core.contract import CompactionDone
from compaction.core.ledger import KINDS
from compaction.core.messages import Message
from compaction.core.receipt import MAX_LISTED, SpanReceipt
from compaction.core.result import CompactionResult
from tests.fakes import SMALL, FakeSummarizer, conversation
from tests.unit.builders import assistant, call, system, tool, user


def _result(messages: list[Message], summary: str) -> CompactionResult:
    return CompactionResult(messages, 100, 50, summarized=True, summary_text=summary, middle=(1, 3))


def test_an_identifier_is_kept_in_the_summary_or_a_kept_message_and_missing_else() -> None:
    span = [
        user("please fix src/app.py and see https://example.org/issue/7"),
        tool("Traceback ... ValueError: bad input in lib/util.py", "c1"),
    ]
    kept = [system(), user("later work on lib/util.py")]
    result = _result(kept, "summary: src/app.py was fixed")
    receipt = receipt_of(span, result)
    assert receipt.totals["paths"] == 2 and receipt.totals["urls"] == 1
    assert receipt.missing["paths"] == ()  # one in the summary, one in a kept message
    assert receipt.missing["urls"] == ("https://example.org/issue/7",)
    assert receipt.missing["errors"] == ("Traceback ... ValueError: bad input in lib/util.py",)
    assert (receipt.kept, receipt.total) == (2, 4)


def test_user_messages_verbatim_or_folded() -> None:
    span = [
        user("Never touch the migrations folder.\nThey are generated."),
        assistant("ok"),
        user("use tabs"),
        tool("use tabs or else", "c1"),  # a tool result is no user message
    ]
    result = _result([system(), user("use tabs")], "the user forbids editing migrations")
    receipt = receipt_of(span, result)
    assert (receipt.verbatim, receipt.user_total) == (1, 2)
    assert receipt.folded == ("Never touch the migrations folder.",)


def test_summaries_in_the_span_are_not_user_instructions() -> None:
    from tests.unit.builders import summary

    receipt = receipt_of([summary("old"), user("go")], _result([], "go"))
    assert (receipt.verbatim, receipt.user_total) == (1, 1)


def test_counts_and_lists_forms() -> None:
    span = [user("run ./deploy.sh now"), assistant("", call({"command": "make test"}, id_="c1"))]
    span.append(tool("FAILED tests/test_a.py::test_x", "c1"))
    receipt = receipt_of(span, _result([], "nothing"))
    wire = receipt.counts(1_200, 300, 0.0042)
    assert wire.identifiers.kept == 0 and wire.identifiers.total == receipt.total > 0
    assert wire.user_messages.total == 1 and wire.user_messages.verbatim == 0
    assert wire.aux_tokens is not None and (wire.aux_tokens.input, wire.aux_tokens.output) == (
        1_200,
        300,
    )
    done = CompactionDone(
        session_id="s", removed_count=2, tokens_before=9, tokens_after=3, receipt=wire
    )
    dumped = json.loads(done.model_dump_json(by_alias=True))
    assert dumped["receipt"]["identifiers"] == {"kept": 0, "total": receipt.total}
    assert dumped["receipt"]["userMessages"] == {"verbatim": 0, "total": 1}
    assert dumped["receipt"]["auxTokens"] == {"input": 1_200, "output": 300}
    assert receipt.counts().aux_tokens is None and receipt.counts().cost is None
    lists = json.loads(json.dumps(receipt.lists()))
    assert lists["identifiers"]["missing"]["commands"] == ["make test"]
    assert lists["userMessages"]["folded"] == ["run ./deploy.sh now"]
    assert set(lists["identifiers"]["totals"]) == set(KINDS)


def test_a_secret_is_never_listed_as_missing() -> None:
    key = "sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4"
    span = [user(f"export OPENAI_API_KEY={key} then curl https://api.example.com/v1/x")]
    receipt = receipt_of(span, _result([], "nothing kept"))
    assert key not in json.dumps(receipt.lists())


def test_lists_are_capped_counts_are_not() -> None:
    paths = " ".join(f"dir/sub/file_{i}.py" for i in range(MAX_LISTED + 50))
    receipt = receipt_of([user(paths)], _result([], "none"))
    assert receipt.totals["paths"] == MAX_LISTED + 50
    assert receipt.missing_counts["paths"] == MAX_LISTED + 50
    assert len(receipt.missing["paths"]) == MAX_LISTED
    assert receipt.kept == 0


def test_the_engine_s_own_ledger_keeps_what_fits() -> None:
    """Through ``compact()``: the ledger lists the span's identifiers, so the receipt counts
    them kept; the span is the middle and the pruned tool results."""
    messages = conversation(12, tool_chars=1_000)
    result = compact(messages, SMALL, FakeSummarizer(), reason="manual")
    span = compacted_span(messages, result)
    start, end = result.middle
    assert span[: end - start] == messages[start:end]
    receipt = receipt_of(span, result)
    assert receipt.total > 0 and receipt.kept == receipt.total
    # with no ledger, only what the fake summary or the kept messages say survives
    bare = compact(
        messages,
        SMALL.model_copy(update={"ledger_max_tokens": 0}),
        FakeSummarizer(),
        reason="manual",
    )
    assert receipt_of(compacted_span(messages, bare), bare).kept < receipt.total


def test_pruned_outputs_belong_to_the_span() -> None:
    """Pruning alone (an automatic run that phase 1 settles): the span is the pruned tool
    results, whose identifiers the placeholders no longer hold."""
    messages = conversation(6, tool_chars=3_000)
    pruned = compact(messages, SMALL, FakeSummarizer(), reason="auto").pruned_ids
    first_tool = next(i for i, m in enumerate(messages) if m.id == pruned[0])
    only = "see only/here/notes.txt " + messages[first_tool].content
    messages[first_tool] = replace(messages[first_tool], content=only)
    result = compact(messages, SMALL, FakeSummarizer(), reason="auto")
    assert not result.summarized and result.pruned_count == 4
    span = compacted_span(messages, result)
    assert [m.id for m in span] == result.pruned_ids
    assert all(m.role == "tool" for m in span)
    receipt = receipt_of(span, result)
    assert receipt.missing["paths"] == ("only/here/notes.txt",)
    assert receipt.user_total == 0


def test_empty_span() -> None:
    receipt = receipt_of([], _result([], ""))
    assert isinstance(receipt, SpanReceipt)
    assert (receipt.kept, receipt.total, receipt.verbatim, receipt.user_total) == (0, 0, 0, 0)


def test_the_haystack_answers_exactly_as_in() -> None:
    """``Haystack.holds(x)`` is ``x in text``, for every piece and every near miss of a text
    with words, punctuation, CJK, repeated and multi-space lines (its index is only a shortcut)."""
    import random

    from compaction.core.receipt import Haystack

    text = (
        "see `src/app.py`, then (https://x.org/a?b=1) and ValueError: bad input\n"
        "run  make test  twice;\tdeadbeef12 v1.2.3 $5 日志 /srv/dumps/orders_2024.sql.\n"
        "ab abc abcdef abcdefgh src/app.py src/app.pyc"
    )
    hay = Haystack(text)
    rng = random.Random(7)
    probes = {text[a:b] for a in range(len(text)) for b in range(a + 1, min(len(text), a + 40))}
    probes |= {p[:-1] + "#" for p in rng.sample(sorted(probes), 2_000) if p}  # near misses
    probes |= {
        "make test",
        "make  test",
        "run  make",
        "src/app.pyx",
        "日志 /srv",
        "zzz",
        "",
        "abcdefg",
    }
    for probe in sorted(probes):
        assert hay.holds(probe) == (probe in text), repr(probe)
