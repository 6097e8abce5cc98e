"""The pure parts of ``benchmarks.versus`` and ``benchmarks.hermes``: no Hermes installed, no
network (a fake compressor stands in for Hermes's)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

from benchmarks import hermes
from benchmarks.engine import SUMMARY, load_transcript
from benchmarks.versus import (
    CONTEXT_WINDOW,
    THRESHOLD_PERCENT,
    Outcome,
    Row,
    freed_ratio,
    freed_verdict,
    hermes_run,
    ours_run,
    ratio,
    row_line,
    total_line,
    verdict,
    work_note,
)
from compaction import CompactionConfig

CONFIG = CompactionConfig(context_window=CONTEXT_WINDOW, threshold_percent=THRESHOLD_PERCENT)


def row(name: str, ours_s: float, hermes_s: float, hermes_out: int | None = 5) -> Row:
    ours = Outcome(10, 5, 1_000, "history")
    theirs = Outcome(9, hermes_out, 1_200, "")
    if hermes_out is None:
        theirs = Outcome(0, None, None, "nothing to compress")
    return Row(name, 20, 70_000, "y/y", ours_s, hermes_s, ours, theirs)


def test_ratio_is_hermes_over_ours() -> None:
    assert ratio(0.010, 0.030) == 3.0
    assert ratio(0.020, 0.010) == 0.5


def test_work_note_only_when_one_side_summarized_under_half() -> None:
    assert work_note(10, 5) == ""
    assert work_note(14, 1) == "NOT the same work: ours summarized 14 messages, Hermes 1"


def test_row_line_shows_ratio_or_why_not() -> None:
    assert "  3.00x    3.01x  ours: history" in row_line(row("a", 0.010, 0.030))
    skipped = row_line(row("b", 0.010, 0.030, hermes_out=None))
    assert "    n/a      n/a  ours: history; Hermes: nothing to compress" in skipped
    different = Row(
        "c", 20, 70_000, "n/n", 0.01, 0.02, Outcome(14, 5, 900, ""), Outcome(1, 19, 0, "")
    )
    assert row_line(different).endswith(
        "2.00x    1.97x  NOT the same work: ours summarized 14 messages, Hermes 1"
    )


def test_totals_count_only_rows_both_sides_compacted() -> None:
    rows = [row("a", 0.010, 0.040), row("b", 0.030, 0.050), row("c", 1.0, 0.001, None)]
    line = total_line("ALL", rows)
    assert "40.0" in line and "90.0" in line and "2.25x" in line
    assert line.endswith("(not counted: c)")


def test_verdict_names_any_transcript_slower_than_hermes() -> None:
    assert verdict([row("a", 0.010, 0.040), row("b", 0.010, 0.030)]).endswith(
        ": met (overall 3.50x)"
    )
    missed = verdict([row("a", 0.010, 0.100), row("b", 0.020, 0.010)])
    assert "NOT met (overall 3.67x; slower than Hermes on: b)" in missed
    different = Row(
        "d", 20, 70_000, "n/n", 0.04, 0.01, Outcome(14, 5, 900, ""), Outcome(1, 9, 0, "")
    )
    assert verdict([row("a", 0.010, 0.200), different]).endswith(
        "NOT met (overall 4.20x; slower than Hermes on: d (not the same work))"
    )


class FakeCompressor:
    """What the benchmark reads of Hermes's ``ContextCompressor``."""

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs
        self.compression_count = 0
        self._last_summary_fallback_used = False

    def _generate_summary(
        self,
        turns: list[dict[str, Any]],
        focus_topic: str | None = None,
        memory_context: str = "",
    ) -> str:
        return SUMMARY

    def compress(self, messages: list[dict[str, Any]], force: bool = False) -> list[dict[str, Any]]:
        if len(messages) < 4:
            return messages
        self._generate_summary(messages[1:-2], focus_topic=None, memory_context="")
        self.compression_count += 1
        return [messages[0], {"role": "user", "content": SUMMARY}, *messages[-2:]]


def fake_module() -> ModuleType:
    module = ModuleType("fake_context_compressor")
    module.ContextCompressor = FakeCompressor  # type: ignore[attr-defined]
    return module


def test_hermes_is_configured_for_the_same_threshold() -> None:
    built = hermes.compressor(fake_module(), CONTEXT_WINDOW, THRESHOLD_PERCENT)
    assert built.kwargs["config_context_length"] * built.kwargs["threshold_percent"] == 64_000
    assert CONFIG.threshold_tokens == 64_000


def test_hermes_run_counts_what_it_summarized_and_names_a_skip() -> None:
    dicts = [{"role": "user", "content": f"turn {i}"} for i in range(6)]
    done = hermes_run(fake_module(), dicts, CONFIG)()()
    assert (done.summarized, done.messages_out, done.note) == (3, 4, "")
    skipped = hermes_run(fake_module(), dicts[:2], CONFIG)()()
    assert skipped == Outcome(0, None, None, "nothing to compress")


def test_ours_run_forces_a_small_transcript_through_the_loop_stage() -> None:
    messages = load_transcript("codex_agentlogs_crud")
    outcome = ours_run(messages, CONFIG)()()
    assert outcome.note == "loop"
    assert outcome.messages_out is not None and outcome.messages_out < len(messages)
    assert outcome.summarized > 1


def test_completion_has_the_shape_hermes_reads() -> None:
    assert hermes.instant_llm(task="compression").choices[0].message.content == SUMMARY


def test_installed_looks_for_this_version_in_the_venv(tmp_path: Path) -> None:
    assert not hermes.installed(tmp_path)
    (hermes.site_packages(tmp_path) / f"hermes_agent-{hermes.VERSION}.dist-info").mkdir(
        parents=True
    )
    assert hermes.installed(tmp_path)


def test_per_token_freed_counts_each_sides_work() -> None:
    # 70,000 tokens before; ours leaves 14,000 (56,000 freed) in 20 ms, Hermes 63,000 (7,000
    # freed) in 10 ms: half the time, an eighth of the work -> 4x per token freed.
    unequal = Row(
        "e", 20, 70_000, "n/n", 0.02, 0.01, Outcome(14, 5, 14_000, ""), Outcome(1, 19, 63_000, "")
    )
    assert freed_ratio([unequal]) == 4.0
    assert row_line(unequal).startswith("e") and "  0.50x    4.00x  NOT the same work" in (
        row_line(unequal)
    )
    assert freed_verdict([unequal]) == "per token freed: met (overall 4.00x)"
    assert verdict([unequal]).endswith("slower than Hermes on: e (not the same work))")


def test_per_token_freed_leaves_out_rows_where_a_side_freed_nothing() -> None:
    grew = Row(
        "g", 20, 4_500, "n/n", 0.001, 0.002, Outcome(4, 11, 4_527, ""), Outcome(3, 11, 4_000, "")
    )
    assert not grew.freed_compared
    assert row_line(grew).split("|")[3].split()[3] == "n/a"
    # each side's own rate: microseconds per 1,000 tokens freed, "-" where it freed none
    assert row_line(grew).split("|")[2].split() == ["-", "4000.0"]
    assert row_line(row("a", 0.010, 0.040)).split("|")[2].split() == ["144.9", "581.4"]
    line = total_line("ALL", [row("a", 0.010, 0.040), grew])
    assert line.endswith("(per token freed without: g)")
    # a: ours frees 69,000 in 10 ms, Hermes 68,800 in 40 ms
    assert f"{(0.040 / 68_800) / (0.010 / 69_000):7.2f}x" in line
    assert freed_verdict([grew]) == "per token freed: no transcript where both sides freed tokens"
