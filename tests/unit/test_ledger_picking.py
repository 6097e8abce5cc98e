"""The ledger's choice under its cap (compaction/core/picking.py, ``ledger.build``): an item a
listed one holds is kept without being listed, what the agent acted on is listed first, and the
kinds of single words are listed several to a line (issue 24)."""

from __future__ import annotations

from compaction.core.ledger import (
    HEADINGS,
    KINDS,
    LINE_CHARS,
    Ledger,
    build,
    parse,
    render,
)
from compaction.core.picking import Cover, acted_on, pieces
from compaction.core.tokens import text_estimator
from compaction.core.turns import Turns
from tests.unit.builders import assistant, call, tool, user

ESTIMATE = text_estimator()


def fresh(**items: list[str]) -> dict[str, list[str]]:
    return {kind: list(items.get(kind, [])) for kind in KINDS}


def test_pieces_are_the_ids_and_the_parts_around_each_slash() -> None:
    found = pieces("/repo/src/cache_12.py")
    assert {"/repo", "/repo/src", "src/cache_12.py", "/src/cache_12.py", "cache_12", "py"} <= found
    assert not found & {"", "cache", "ache_1", "repo/s"}
    assert all(piece in "/repo/src/cache_12.py" for piece in found)
    assert pieces("https://x.org/runs/8f3e2a1c-5b7d") >= {"8f3e2a1c-5b7d", "runs/8f3e2a1c-5b7d"}


def test_pieces_of_a_command_are_taken_word_by_word() -> None:
    found = pieces("git log -- src/a/mod_007.py")
    assert {"git log -- src/a/mod_007.py", "mod_007", "src/a/mod_007.py", "a/mod_007.py"} <= found
    assert "log --" not in found  # no piece spans a space: only the whole item does


def test_the_cover_knows_what_the_listed_items_hold() -> None:
    cover = Cover()
    cover.add("src/a/mod_007.py")
    assert "mod_007" in cover and "src/a/mod_007.py" in cover and "mod_008" not in cover
    # a listed item is not inside itself: only a longer one that holds it takes it off the list
    assert "src/a/mod_007.py" not in cover.inside
    cover.add("/repo/src/a/mod_007.py")
    assert "src/a/mod_007.py" in cover.inside and "/repo/src" in cover


#: Older ids than a test's own, too many for its cap: the cap binds.
FILLER = [f"old_{i:04d}" for i in range(1_000)]


def test_what_fits_is_listed_whole() -> None:
    # under the cap nothing is left out: an id inside a path is listed all the same
    items = fresh(paths=["src/pkg/mod_001.py"], ids=["mod_001"])
    ledger = build(items, None, 1_000, ESTIMATE)
    assert ledger.items == items and ledger.held == ledger.dropped == 0


def test_an_id_inside_a_listed_path_is_kept_but_not_listed() -> None:
    paths = [f"src/pkg/mod_{i:03d}.py" for i in range(5)]
    ids = [f"mod_{i:03d}" for i in range(5)] + ["job_777"]
    ledger = build(fresh(paths=paths, ids=FILLER + ids), None, 300, ESTIMATE)
    assert ledger.items["paths"] == paths
    assert "job_777" in ledger.items["ids"]
    assert not set(ids[:5]) & set(ledger.items["ids"])
    assert ledger.held == 5 and ledger.dropped > 0
    text = render(ledger, "en")
    assert all(item in text for item in paths + ids)


def test_a_dir_inside_a_listed_path_is_not_listed_again() -> None:
    paths = ["/repo/src", "/repo/src/app.py", "/repo/docs"]
    ledger = build(fresh(paths=paths, ids=FILLER), None, 300, ESTIMATE)
    assert ledger.items["paths"] == ["/repo/src/app.py", "/repo/docs"]
    assert ledger.held == 1


def test_an_item_listed_before_what_holds_it_is_taken_off_and_its_budget_spent() -> None:
    # newest first: the directory is listed before the files that hold it; then it is taken off
    # the list, and what it cost is spent on one more file
    files = [f"/repo/src/f_{i:02d}.py" for i in range(30)]
    items = fresh(paths=[*files, "/repo/src"])
    ledger = build(items, None, 20, ESTIMATE)
    assert "/repo/src" not in ledger.items["paths"] and ledger.held == 1
    assert len(ledger) + ledger.dropped + ledger.held == 31
    without = build(fresh(paths=files), None, 20, ESTIMATE)
    assert ledger.items["paths"] == without.items["paths"]


def test_what_the_agent_acted_on_is_listed_first() -> None:
    read = [f"src/read/file_{i:03d}.py" for i in range(100)]
    edited = "src/edit/target.py"
    items = fresh(paths=[edited, *read])  # the edited file is the oldest
    assert edited not in build(items, None, 100, ESTIMATE).items["paths"]
    ledger = build(items, None, 100, ESTIMATE, acted=lambda: frozenset({edited}))
    assert edited in ledger.items["paths"] and ledger.dropped > 50


def test_acted_on_reads_the_calls_arguments_only() -> None:
    messages = [
        user("look at src/told.py"),
        assistant("", call({"file_path": "/repo/src/edited.py", "old_string": "job_0042 = 1"})),
        tool("/repo/src/read_only.py\n  1  x = run_0001"),
    ]
    acted = acted_on(Turns.of(messages))
    assert {"/repo/src/edited.py", "job_0042"} <= acted
    assert not acted & {"src/told.py", "/repo/src/read_only.py", "run_0001"}


def test_single_word_kinds_are_packed_and_read_back() -> None:
    ids = [f"name_{i:04d}" for i in range(60)]
    ledger = build(fresh(ids=ids, values=["$1 200", "2.9.1"]), None, 10_000, ESTIMATE)
    assert ledger.items["ids"] == ids
    lines = [line for line in render(ledger, "en").splitlines() if line.startswith("- ")]
    assert len(lines) < 60 / 5 + 2  # several ids a line, each value on its own
    assert all(len(line) <= LINE_CHARS + 2 for line in lines)
    _, back = parse("body\n\n" + render(ledger, "en"))
    assert back is not None and back.items == ledger.items


def test_a_ledger_written_one_item_a_line_is_read_back() -> None:
    old = HEADINGS["en"]["title"] + "\n### IDs\n- job_0001\n- job_0002"
    _, back = parse("body\n\n" + old)
    assert back is not None and back.items["ids"] == ["job_0001", "job_0002"]


def test_the_overflow_count_leaves_out_what_is_held() -> None:
    paths = [f"src/pkg/mod_{i:03d}.py" for i in range(200)]
    ids = [f"mod_{i:03d}" for i in range(200)]
    ledger = build(fresh(paths=paths, ids=ids), None, 300, ESTIMATE)
    assert ledger.dropped and ledger.held
    listed = render(ledger, "en")
    unlisted = [i for i in paths + ids if i not in ledger.all_items()]
    assert sum(1 for i in unlisted if i not in listed) == ledger.dropped


def test_an_empty_ledger_holds_nothing() -> None:
    assert build(fresh(), None, 100, ESTIMATE) == Ledger()
