"""The window recall returns of a match too long for its budget (``compaction.core.excerpt``;
docs/architecture.md, "Recall"): where the query's terms are, whatever their place in the text,
the densest place for several terms, CJK, and never over the budget."""

from __future__ import annotations

import re

import pytest

from compaction.core.excerpt import cut_mark, excerpt, needles
from compaction.core.tokens import text_estimator

ESTIMATE = text_estimator()
LISTING = "\n".join(f"line {i} src/pkg/module_{i}.py" for i in range(2_000))
_MARK = re.compile(r" ?… \[(\d+) characters (before|between|after)\] … ?")


def parts(cut: str) -> tuple[int, str, int]:
    """A cut text's characters left out before its one window, the window, those after."""
    pieces = _MARK.split(cut)
    before = int(pieces[1]) if pieces[0] == "" and len(pieces) > 1 else 0
    shown = pieces[3] if before else pieces[0]
    after = int(pieces[-3]) if pieces[-1] == "" and pieces[-2] == "after" else 0
    return before, shown, after


def shown_windows(text: str, cut: str) -> list[str]:
    """The windows of ``text`` that ``cut`` shows, checked: each is ``text`` at the place the
    marks before it say, and the marks and windows add up to the whole text."""
    pieces = _MARK.split(cut)
    at, shown = 0, []
    for i in range(0, len(pieces), 3):
        if pieces[i]:
            assert text[at : at + len(pieces[i])] == pieces[i]
            shown.append(pieces[i])
            at += len(pieces[i])
        if i + 1 < len(pieces):
            at += int(pieces[i + 1])
    assert at == len(text)
    return shown


def assert_a_window_of(text: str, cut: str) -> str:
    """``cut`` is one window of ``text`` and its marks count what is left out on each side."""
    [shown] = shown_windows(text, cut)
    return shown


def test_a_text_that_fits_is_whole() -> None:
    assert excerpt("short text", "text", 50, ESTIMATE) == ("short text", False)


def test_a_term_at_the_very_end() -> None:
    cut, truncated = excerpt(LISTING, "module_1999.py", 60, ESTIMATE)
    assert truncated and ESTIMATE(cut) <= 60
    shown = assert_a_window_of(LISTING, cut)
    assert shown.endswith("src/pkg/module_1999.py") and "characters after" not in cut
    assert shown.startswith("line ")  # moved to a line's start


def test_a_term_at_the_very_start() -> None:
    cut, _ = excerpt(LISTING, "line 0 src", 60, ESTIMATE)
    shown = assert_a_window_of(LISTING, cut)
    assert shown.startswith("line 0 src/pkg/module_0.py") and "characters before" not in cut


def test_a_term_in_the_middle_is_centred() -> None:
    cut, _ = excerpt(LISTING, "module_1000.py", 60, ESTIMATE)
    before, shown, after = parts(cut)
    assert "module_1000.py" in shown
    at = shown.index("module_1000.py")
    assert abs(at - (len(shown) - at - len("module_1000.py"))) < 130  # within a line snap
    assert before and after


def test_several_terms_take_the_densest_window() -> None:
    text = "alpha " + "x" * 3000 + " alpha beta " + "y" * 3000 + " beta"
    cut, _ = excerpt(text, "beta alpha", 100, ESTIMATE)
    shown = assert_a_window_of(text, cut)
    assert "alpha beta" in shown


def test_terms_far_apart_take_two_windows() -> None:
    text = "x" * 3000 + " alpha " + "y" * 6000 + " beta " + "z" * 3000
    cut, _ = excerpt(text, "alpha beta", 300, ESTIMATE)
    assert ESTIMATE(cut) <= 300 and "characters between" in cut
    first, second = shown_windows(text, cut)
    assert "alpha" in first and "beta" in second
    # too small a budget for two useful windows: the densest one alone
    [alone] = shown_windows(text, excerpt(text, "alpha beta", 60, ESTIMATE)[0])
    assert "alpha" in alone


def test_the_query_verbatim_outweighs_its_words() -> None:
    text = "run the tests " + "z" * 3000 + " tests run " + "z" * 3000 + " pytest -x tests/a.py end"
    cut, _ = excerpt(text, "pytest -x tests/a.py", 40, ESTIMATE)
    assert "pytest -x tests/a.py" in assert_a_window_of(text, cut)


def test_case_does_not_matter() -> None:
    text = "a" * 5000 + " DeployKeyAlpha " + "b" * 5000
    cut, _ = excerpt(text, "deploykeyalpha", 40, ESTIMATE)
    assert "DeployKeyAlpha" in cut


def test_cjk_text_is_windowed_in_cjk_tokens() -> None:
    text = "数据" * 800 + "迁移失败了" + "数据" * 800
    cut, truncated = excerpt(text, "迁移失败", 40, ESTIMATE)
    assert truncated and ESTIMATE(cut) <= 40
    shown = assert_a_window_of(text, cut)
    assert "迁移失败了" in shown


def test_nothing_found_keeps_the_head() -> None:
    cut, truncated = excerpt(LISTING, "absent_word", 40, ESTIMATE)
    assert truncated and assert_a_window_of(LISTING, cut).startswith("line 0 ")
    assert "characters before" not in cut


@pytest.mark.parametrize("budget", [1, 5, 12, 13, 20, 33, 80, 400])
@pytest.mark.parametrize("query", ["module_1500.py", "line 7", "迁移", "src pkg", "absent"])
def test_never_over_the_budget(budget: int, query: str) -> None:
    cut, truncated = excerpt(LISTING, query, budget, ESTIMATE)
    assert truncated and ESTIMATE(cut) <= budget
    if cut:
        shown_windows(LISTING, cut)


def test_a_budget_too_small_for_the_marks_gives_nothing() -> None:
    assert excerpt(LISTING, "module_1000.py", 3, ESTIMATE) == ("", True)


def test_a_window_too_short_for_the_whole_term_is_near_it() -> None:
    text = "q" * 4000 + " " + "w" * 200 + " " + "q" * 4000
    cut, _ = excerpt(text, "w" * 200, 25, ESTIMATE)
    before, shown, _after = parts(cut)
    assert set(shown.strip()) == {"w"} and 4000 <= before <= 4200


def test_cut_marks_and_needles() -> None:
    assert cut_mark(3, "before") == "… [3 characters before] … "
    assert cut_mark(5, "between") == " … [5 characters between] … "
    assert cut_mark(4, "after") == " … [4 characters after] …"
    assert needles("  Run pytest -x tests/a.py ") == [
        "run pytest -x tests/a.py",
        "run",
        "pytest",
        "-x",
        "tests/a.py",
        "x",
        "tests",
        "a",
        "py",
    ]


def test_a_text_whose_lower_case_is_longer_is_still_found() -> None:
    text = "İ" * 3000 + " Needle " + "İ" * 3000  # "İ".lower() is two characters
    cut, _ = excerpt(text, "needle", 40, ESTIMATE)
    assert "Needle" in assert_a_window_of(text, cut)


def test_a_too_common_term_does_not_pull_the_window() -> None:
    # "line" and "src" are on every line; only module_1234.py says where to look
    cut, _ = excerpt(LISTING, "line src module_1234.py", 60, ESTIMATE)
    assert "module_1234.py" in cut
    only_common = excerpt(LISTING, "src line", 60, ESTIMATE)[0]
    assert assert_a_window_of(LISTING, only_common).startswith("line 0 ")
