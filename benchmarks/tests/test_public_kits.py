"""The public benchmarks' harnesses (issue 24), ``benchmarks/conformance.py`` and
``benchmarks/compactbench.py``, on a small seeded run. The kits are not dependencies of the
project: they live in ``.bench/kits-venv`` (``python -m benchmarks.conformance`` installs them on
first use). Where that virtualenv is missing, these checks are SKIPPED (never installed from a
test); the pure parts (the config and the text of a compaction) run always."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from benchmarks import compactbench, conformance
from compaction.core.prompts import HEADINGS

needs_kits = pytest.mark.skipif(
    not conformance.kits_importable(),
    reason="kits not installed in .bench/kits-venv (run python -m benchmarks.conformance once)",
)

# Our own decision conversation (not a kit's template): a plan, then the user overrides it.
DECISION = [
    ("system", "You are a planning assistant."),
    ("user", "For the billing export, let's rewrite the importer in Rust."),
    ("assistant", "Understood. Shall I start?"),
    ("user", "No: switch to plan B, batching the writes in the Python importer."),
    ("assistant", "Batching the writes."),
    ("user", "What about the retry policy on the queue?"),
    ("assistant", "Three retries, then the dead-letter queue."),
    ("user", "And the dashboard colours?"),
    ("assistant", "Blue and grey, as in the style guide."),
    ("user", "Remind me what we decided."),
]


def test_the_kits_budget_is_shared_by_the_summarys_parts() -> None:
    messages = conformance.to_messages([("system", "x" * 100), ("user", "y" * 4000)])
    config = conformance.config_for(messages, 1_000)
    parts = config.summary_max_tokens + config.user_words_max_tokens + config.ledger_max_tokens
    assert parts * 4 <= 1_000 - 100
    assert config.protect_first_n == 1


def test_the_override_is_the_goal_and_the_rejected_plan_is_not() -> None:
    text = compactbench.text_of(compactbench.ours(DECISION))
    goal = compactbench.goal_of(text)
    assert "switch to plan B" in goal
    assert "Rust" not in goal
    assert HEADINGS["en"]["goal"] in text


@needs_kits
def test_conformance_keeps_every_canary_without_a_cap() -> None:
    conformance.ensure_kits()
    result = conformance.run(conformance.Ours, seeds=[1], rounds=2, budget=1.0)
    assert result["kept"] == result["planted"]
    assert result["compliant"]


@needs_kits
def test_conformance_at_the_kits_budget_stays_near_it() -> None:
    conformance.ensure_kits()
    result = conformance.run(conformance.Ours, seeds=[2], rounds=2, budget=0.2)
    kept, planted = sum(result["kept"].values()), sum(result["planted"].values())
    assert kept / planted >= 0.5  # 0.2 before issue 24's rule lines
    assert max(result["ratio"]) <= 0.21


@needs_kits
def test_compactbench_scores_presence_on_the_compacted_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    conformance.ensure_kits()
    suite = tmp_path / "own"
    suite.mkdir()
    (suite / "override_own_v1.yaml").write_text(TEMPLATE)
    assert compactbench.main(["--suites", str(tmp_path), "--cases", "2", "--cycles", "2"]) == 0
    out = capsys.readouterr().out
    assert "| override_own_v1 | 6/6 (1.00); rejected plan as goal 0/6 |" in out, out
    assert "compactbench" in sys.modules


TEMPLATE = """
template:
  key: override_own_v1
  family: decision_override
  version: 1.0.0
  difficulty_policy:
    distractor_turns: {easy: 2, medium: 3, hard: 4}
    paraphrase_depth: {easy: 0, medium: 0, hard: 0}
  variables:
    - {name: first, generator: action_phrase}
    - {name: second, generator: action_phrase}
  transcript:
    turns:
      - {role: user, template: "Plan for the release: {{first}}."}
      - {role: assistant, template: "Shall I go ahead?"}
      - {role: user, template: "Change of plan, we will go with this instead: {{second}}."}
      - {role: distractor_block, count: "{{difficulty.distractor_turns}}"}
      - {role: user, template: "What is the plan now?"}
  ground_truth:
    locked_decisions: ["{{second}}"]
    forbidden_behaviors: ["{{first}}"]
  evaluation_items:
    - key: current_plan
      type: locked_decision_retention
      prompt: "What is the plan?"
      expected: {check: contains_normalized, value: "{{second}}"}
"""
