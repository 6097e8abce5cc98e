"""Identifier survival (issue 24): errors named in an assistant's prose, the ledger's overflow
line, the identifiers of pruned tool outputs, URLs ending at a markdown link."""

from __future__ import annotations

from compaction import CompactionConfig, compact
from compaction.core.identifiers import prose_errors, scan
from compaction.core.ledger import build, extract, overflow_line, parse, render
from compaction.core.receipt import compacted_span
from compaction.core.tokens import text_estimator
from tests.fakes import FakeSummarizer, load_transcript
from tests.invariants import new_problems
from tests.unit.builders import assistant, system, tool, user

estimate_text = text_estimator()

# ------------------------------------------------------------------ errors in assistant prose


def test_an_error_named_in_prose_is_quoted_to_the_end_of_its_sentence() -> None:
    text = "The run failed with a KeyError: 'user_id'. Next I add the column."
    assert list(prose_errors(text)) == ["KeyError: 'user_id'"]


def test_a_bare_error_name_in_prose_is_kept_with_its_clause() -> None:
    found = list(prose_errors("Line one.\nIt raised ModuleNotFoundError because numpy is absent"))
    assert found == ["ModuleNotFoundError because numpy is absent"]


def test_prose_without_a_named_error_gives_nothing() -> None:
    text = "Error handling is better now. No errors remain; the error path is tested."
    assert list(prose_errors(text)) == []
    assert extract([assistant(text)])["errors"] == []


def test_the_ledger_lists_the_errors_an_assistant_names() -> None:
    found = extract([user("fix it"), assistant("That is a TypeError: 'NoneType'. I will fix it.")])
    assert found["errors"] == ["TypeError: 'NoneType'"]


# ------------------------------------------------------------------ the overflow line


def test_an_overflowing_ledger_says_where_the_rest_is() -> None:
    items = {"urls": [f"https://example.org/page/{i}" for i in range(100)]}
    ledger = build(items, None, 60, estimate_text)
    assert 0 < len(ledger) < 100 and ledger.dropped == 100 - len(ledger)
    text = render(ledger, "en")
    assert text.splitlines()[-1] == overflow_line(ledger.dropped, "en")
    assert "use recall to search the compacted messages" in text
    _, back = parse(text)
    assert back is not None and back.all_items() == ledger.all_items()


def test_the_overflow_line_speaks_the_summary_language() -> None:
    ledger = build({"ids": [f"job_{i:04d}" for i in range(50)]}, None, 30, estimate_text)
    assert render(ledger, "zh").splitlines()[-1] == overflow_line(ledger.dropped, "zh")
    assert "recall" in overflow_line(3, "zh")


def test_a_ledger_that_fits_has_no_overflow_line() -> None:
    text = render(build({"ids": ["job_0001"]}, None, 1000, estimate_text), "en")
    assert "recall" not in text


# ------------------------------------------------------------------ pruned outputs


def test_the_ledger_lists_the_urls_of_pruned_outputs() -> None:
    # deerflow_3823e443: 186 search-result URLs live in tool outputs that phase 1 prunes in the
    # kept tail; before issue 24 the ledger listed the summarized middle's only (6 of 206 kept).
    messages = load_transcript("deerflow_3823e443")
    config = CompactionConfig(context_window=20_000, protect_first_n=1)
    result = compact(messages, config, FakeSummarizer(), reason="manual")
    start, end = result.middle
    pruned = [m for m in compacted_span(messages, result) if m not in messages[start:end]]
    urls = {u for m in pruned for u in scan(m.source_text.split())["urls"]}
    assert pruned and len(urls) > 100
    summary = result.summary_message
    assert summary is not None
    assert [u for u in urls if u not in summary.content] == []


# ------------------------------------------------------------------ markdown links, invariants


def test_a_url_ends_where_a_markdown_image_link_closes() -> None:
    word = "[![logo](https://x.org/logo.svg)](https://x.org/company/page)"
    assert scan([word])["urls"] == ["https://x.org/logo.svg", "https://x.org/company/page"]


def test_a_system_message_the_engine_made_mid_thread_is_a_problem() -> None:
    before = [user("a"), assistant("b"), user("c")]
    assert new_problems(before, [user("a"), system(), user("c")]) != []
    inherited = [user("a"), system(), user("c")]
    assert new_problems(inherited, inherited) == []


# ------------------------------------------------------------------ a URL too long to list


def test_a_url_too_long_to_list_is_listed_without_its_query() -> None:
    # deerflow_7cfa5f8f: a 334-character link whose query carries tracking parameters; its path
    # was left out as part of a URL, and the URL for its length: neither was listed
    page = "https://finance.example.com/news/chip-surge-100846509.html"
    long_url = page + "?guccounter=1&guce_referrer=" + "a" * 300
    found = extract([tool(f"gains of [200 percent]({long_url}) in a day")])
    assert found["urls"] == [page]
    assert found["paths"] == []  # inside the listed URL
    short = page + "?id=7"
    assert extract([tool(f"see {short} now")])["urls"] == [short]  # a query that fits stays
