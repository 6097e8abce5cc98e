"""The exact-identifier ledger (compaction/core/ledger.py): the token cap (``build``), rendering and
parsing, and round trips through ``extract``."""

from __future__ import annotations

import pytest

from compaction.core.ledger import (
    FLOOR_SHARE,
    HEADINGS,
    KINDS,
    Ledger,
    build,
    extract,
    parse,
    render,
    shares,
)
from compaction.core.tokens import text_estimator
from tests.unit.builders import assistant, call, tool, user

ESTIMATE = text_estimator()
KIND_NAMES = list(KINDS)


def fresh(**items: list[str]) -> dict[str, list[str]]:
    return {kind: list(items.get(kind, [])) for kind in KIND_NAMES}


def ledger_of(**items: list[str]) -> Ledger:
    ledger = Ledger()
    for kind, values in items.items():
        ledger.items[kind] = list(values)
    return ledger


def cost(items: list[str]) -> int:
    return sum(ESTIMATE(item) + 2 for item in items)


def listed(ledger: Ledger) -> int:
    """The tokens of the ledger's item lines as rendered (headings and overflow line aside)."""
    lines = render(ledger, "en").splitlines()
    return ESTIMATE("\n".join(line for line in lines if line.startswith("- ")))


# --------------------------------------------------------------------------- build


def test_build_without_cap_keeps_everything_in_order() -> None:
    items = fresh(paths=["/a.py", "/b.py"], errors=["ValueError: x"], commands=["ls"])
    ledger = build(items, None, 10_000, ESTIMATE)
    assert ledger.items["paths"] == ["/a.py", "/b.py"]
    assert ledger.items["errors"] == ["ValueError: x"]
    assert ledger.items["commands"] == ["ls"]
    assert ledger.dropped == 0
    assert len(ledger) == 4
    assert ledger.all_items() == ["ValueError: x", "ls", "/a.py", "/b.py"]


def test_build_respects_the_cap_and_keeps_newest() -> None:
    paths = [f"/srv/project/file_{i:03d}.py" for i in range(50)]
    ledger = build(fresh(paths=paths), None, 100, ESTIMATE)
    kept = ledger.items["paths"]
    assert 0 < len(kept) < 50
    assert listed(ledger) <= 100
    assert kept == paths[-len(kept) :]  # newest kept, oldest first
    assert ledger.dropped == 50 - len(kept)


@pytest.mark.parametrize("cap", [0, 1, 5, 17, 40, 100, 333, 1000])
def test_build_cap_over_every_kind(cap: int) -> None:
    items = fresh(
        errors=[f"ValueError: problem number {i}" for i in range(20)],
        commands=[f"pytest tests/test_{i}.py -x" for i in range(20)],
        paths=[f"src/pkg/mod_{i}.py" for i in range(20)],
        urls=[f"https://example.com/page/{i}" for i in range(20)],
        ids=[f"id_{i:04d}" for i in range(20)],
        values=[f"{i}.0.{i}" for i in range(20)],
    )
    total = sum(len(v) for v in items.values())
    ledger = build(items, None, cap, ESTIMATE)
    assert listed(ledger) <= cap
    assert len(ledger) + ledger.dropped + ledger.held == total
    for kind in KIND_NAMES:
        kept = ledger.items[kind]
        assert kept == items[kind][len(items[kind]) - len(kept) :]


def test_build_cap_zero_is_empty() -> None:
    ledger = build(fresh(paths=["/a.py"], errors=["E: x"]), ledger_of(ids=["JG7FMM"]), 0, ESTIMATE)
    assert len(ledger) == 0
    assert ledger.all_items() == []
    assert ledger.dropped == 3
    assert render(ledger, "en") == ""


def test_build_spends_leftover_on_other_kinds() -> None:
    # Only paths are present: they get the whole cap.
    paths = [f"/p/{i:03d}.py" for i in range(200)]
    ledger = build(fresh(paths=paths), None, 200, ESTIMATE)
    assert listed(ledger) > 200 * 0.9
    assert listed(ledger) <= 200


def test_shares_follow_what_the_span_holds() -> None:
    # Thousands of paths beside a few URLs: the URLs keep all theirs (their floor covers them),
    # the paths get the rest; an absent kind gets nothing.
    paths = [f"/src/pkg/module_{i:04d}.py" for i in range(2_000)]
    urls = [f"https://example.com/source/{i}" for i in range(5)]
    allowance = shares(fresh(paths=paths, urls=urls), 1_000)
    assert set(allowance) == {"paths", "urls"}
    assert cost(urls) <= allowance["urls"] < 1_000 * FLOOR_SHARE
    assert allowance["paths"] > 900
    assert sum(allowance.values()) <= 1_000
    ledger = build(fresh(paths=paths, urls=urls), None, 1_000, ESTIMATE)
    assert ledger.items["urls"] == urls
    assert listed(ledger) <= 1_000


def test_shares_are_proportional_to_size() -> None:
    commands = [f"ls -la /tmp/dir_{i}" for i in range(30)]
    allowance = shares(fresh(errors=["ValueError: x"], commands=commands), 10_000)
    assert allowance["errors"] >= cost(["ValueError: x"])
    assert allowance["commands"] > 10 * allowance["errors"]
    assert sum(allowance.values()) <= 10_000


def test_floor_is_at_most_a_share_of_the_cap() -> None:
    # Two large kinds: neither's floor takes more than FLOOR_SHARE; the rest goes by size.
    paths = [f"/src/pkg/module_{i:04d}.py" for i in range(3_000)]
    ids = [f"{i:08x}a" for i in range(1_000)]
    allowance = shares(fresh(paths=paths, ids=ids), 1_000)
    assert allowance["ids"] < allowance["paths"]
    assert allowance["ids"] >= 1_000 * FLOOR_SHARE
    assert sum(allowance.values()) <= 1_000


def test_build_merges_previous_with_dedup() -> None:
    previous = ledger_of(paths=["/old/a.py", "/shared.py"], errors=["KeyError: k"])
    items = fresh(paths=["/shared.py", "/new/b.py"], errors=["KeyError: k", "OSError: o"])
    ledger = build(items, previous, 10_000, ESTIMATE)
    assert ledger.items["paths"] == ["/old/a.py", "/shared.py", "/new/b.py"]
    assert ledger.items["errors"] == ["KeyError: k", "OSError: o"]
    assert ledger.dropped == 0


def test_build_prefers_fresh_over_carried_when_cap_binds() -> None:
    previous = ledger_of(paths=[f"/old/file_{i:02d}.py" for i in range(30)])
    items = fresh(paths=[f"/new/file_{i:02d}.py" for i in range(5)])
    ledger = build(items, previous, 60, ESTIMATE)
    kept = ledger.items["paths"]
    assert kept[-5:] == items["paths"]
    assert listed(ledger) <= 60
    assert ledger.dropped == 35 - len(kept)


def test_build_does_not_change_its_inputs() -> None:
    previous = ledger_of(paths=["/old/a.py"])
    items = fresh(paths=["/b.py", "/c.py"])
    build(items, previous, 5, ESTIMATE)
    assert previous.items["paths"] == ["/old/a.py"]
    assert items["paths"] == ["/b.py", "/c.py"]


# --------------------------------------------------------------------------- render / parse


def full_ledger() -> Ledger:
    return ledger_of(
        errors=["ValueError: bad value", "FAILED tests/test_a.py::test_x"],
        commands=["pytest -x", "git status --short"],
        paths=["/etc/hosts", "src/app/main.py"],
        urls=["https://example.com/docs"],
        ids=["9dd68ea", "mia_li_3668"],
        values=["$1,234.50", "2.9.1"],
    )


@pytest.mark.parametrize("language", ["en", "zh"])
def test_render_parse_round_trip(language: str) -> None:
    ledger = full_ledger()
    text = render(ledger, language)
    assert text.startswith(HEADINGS[language]["title"])
    body, back = parse("## Goal\n- the body\n\n" + text)
    assert body == "## Goal\n- the body"
    assert back is not None
    assert back.items == ledger.items


@pytest.mark.parametrize("language", ["en", "zh"])
def test_render_lists_items_under_their_headings(language: str) -> None:
    text = render(full_ledger(), language)
    lines = text.splitlines()
    for kind in KIND_NAMES:
        assert HEADINGS[language][kind] in lines
    at = lines.index(HEADINGS[language]["paths"])
    assert lines[at + 1] == "- /etc/hosts src/app/main.py"  # paths: several to a line


def test_render_skips_empty_kinds() -> None:
    text = render(ledger_of(paths=["/a.py"]), "en")
    assert (
        text
        == "## Exact identifiers (verbatim from the compacted turns)\n### Files and paths\n- /a.py"
    )


def test_render_empty_ledger_is_empty_text() -> None:
    assert render(Ledger(), "en") == ""
    assert render(Ledger(), "zh") == ""


def test_render_unknown_language_falls_back_to_english() -> None:
    assert render(ledger_of(ids=["JG7FMM"]), "fr") == render(ledger_of(ids=["JG7FMM"]), "en")


@pytest.mark.parametrize("text", ["", "just a summary body", "## Goal\n- x\n### Errors\n- y"])
def test_parse_without_ledger(text: str) -> None:
    assert parse(text) == (text, None)


def test_parse_body_before_title() -> None:
    body = "## 目标\n- 修复解析器\n\n## 下一步\n- 运行测试"
    summary = body + "\n\n" + render(ledger_of(commands=["pytest"]), "zh")
    parsed_body, ledger = parse(summary)
    assert parsed_body == body
    assert ledger is not None
    assert ledger.items["commands"] == ["pytest"]


def test_round_trip_through_extract_and_build() -> None:
    messages = [
        user("Fix /etc/app.conf, see https://example.com/issue/7 for booking JG7FMM"),
        assistant("", call({"command": "make test"})),
        tool("ValueError: boom at 2.9.1"),
    ]
    ledger = build(extract(messages), None, 1_000, ESTIMATE)
    for language in ("en", "zh"):
        _, back = parse("body\n\n" + render(ledger, language))
        assert back is not None
        assert back.items == ledger.items


def test_round_trip_of_error_line_with_carriage_return() -> None:
    output = "Downloading 10%\rDownloading 100%\rValueError: bad wheel\ndone"
    ledger = build(extract([tool(output)]), None, 1_000, ESTIMATE)
    assert ledger.items["errors"]
    _, back = parse("body\n\n" + render(ledger, "en"))
    assert back is not None
    assert back.items == ledger.items
