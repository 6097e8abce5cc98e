"""The offline summarizer's user lines (issue 24, compaction/core/offline.py): every rule,
preference and value line of the user is kept, the oldest too; a restated value keeps only the
newest; a decision stated mid-conversation is kept and the goal follows it."""

from __future__ import annotations

from compaction.core.messages import Message
from tests.unit.builders import assistant, user
from tests.unit.offline_helpers import EN, section, summarize

RULES = [
    "Never reveal API keys or tokens in any reply.",
    "Always run the linter before committing.",
    "Do not touch the main branch.",
    "Only use the standard library for the parser.",
    "I prefer short commit messages.",
    "Note: the staging host is db-stage.internal on port 5433.",
]


def conversation_with_rules() -> list[Message]:
    messages: list[Message] = []
    for i, rule in enumerate(RULES):
        messages += [user(rule), assistant(f"Understood ({i}).")]
        messages += [user("Let us keep going with the refactor."), assistant("Working on it.")]
    return messages


def test_every_user_rule_line_is_kept_the_first_too() -> None:
    out = summarize(conversation_with_rules())
    kept = section(out, EN["constraints"])
    for rule in RULES:
        assert rule in kept, rule
    assert RULES[0] == kept[0]  # the oldest rule is not the one dropped


def test_rule_lines_survive_a_small_budget_better_than_other_sections() -> None:
    out = summarize(conversation_with_rules(), budget=400)
    kept = section(out, EN["constraints"])
    assert len(kept) > 2  # more than the per-section floor of the other headings
    assert RULES[-1] in kept  # newest first when even the rule lines do not fit


def test_a_restated_value_keeps_only_the_newest() -> None:
    messages = [
        user("The budget cap is $300 for the whole sprint."),
        assistant("Noted."),
        user("The budget cap is $750 for the whole sprint."),
        assistant("Noted."),
    ]
    kept = section(summarize(messages), EN["constraints"])
    assert "The budget cap is $750 for the whole sprint." in kept
    assert not any("$300" in line for line in kept)


def test_a_mid_conversation_decision_is_kept_and_becomes_the_goal() -> None:
    messages = [
        user("Plan A: rewrite the importer in Rust for speed."),
        assistant("Here are options A, B and C with their trade-offs."),
        user("Let's go with C: batch the writes in the existing Python importer."),
        assistant("Batching the writes now."),
        user("Also add a progress bar."),
        assistant("Added."),
    ]
    out = summarize(messages)
    goal = section(out, EN["goal"])
    assert goal == ["Let's go with C: batch the writes in the existing Python importer."]
    assert "Let's go with C: batch the writes in the existing Python importer." in section(
        out, EN["constraints"]
    )
    assert not any("Rust" in line for line in goal)


def test_a_later_decision_replaces_the_goal_on_update() -> None:
    first = summarize([user("Build the exporter with plan A."), assistant("Starting plan A.")])
    assert section(first, EN["goal"]) == ["Build the exporter with plan A."]
    second = summarize(
        [user("Switch to plan B: stream the rows instead."), assistant("Switching.")],
        previous=first,
    )
    assert section(second, EN["goal"]) == ["Switch to plan B: stream the rows instead."]


def test_without_a_decision_the_first_goal_stays() -> None:
    first = summarize([user("Build the exporter."), assistant("Starting.")])
    second = summarize([user("Add a test too."), assistant("Done.")], previous=first)
    assert section(second, EN["goal"]) == ["Build the exporter."]


def test_a_short_labelled_message_is_kept_whole() -> None:
    text = "Note: only the v2 client is supported. Nothing else may call the billing API."
    kept = section(summarize([user(text), assistant("Noted.")]), EN["constraints"])
    assert kept == [text]  # its second sentence holds no rule word, yet it is on record


def test_an_unlabelled_message_gives_its_rule_sentences_only() -> None:
    text = "You must not change the public API. The weather is nice today."
    kept = section(summarize([user(text), assistant("Noted.")]), EN["constraints"])
    assert kept == ["You must not change the public API."]


def test_a_decision_in_the_protected_head_does_not_replace_a_later_goal() -> None:
    head = [user("Let's do plan A: rewrite everything.")]
    first = summarize(
        [user("Scratch that, switch to plan B: patch the parser."), assistant("Patching.")],
        head=head,
    )
    second = summarize([user("What next?"), assistant("Tests.")], head=head, previous=first)
    assert section(second, EN["goal"]) == ["Scratch that, switch to plan B: patch the parser."]


def test_a_superseded_value_does_not_come_back_as_context() -> None:
    messages = [
        user("Hard cap: the budget is $300 total."),
        assistant("Noted."),
        user("Hard cap: the budget is $750 total."),
        assistant("Noted."),
    ]
    out = summarize(messages)
    assert not any("$300" in line for line in out.splitlines())
    assert "Hard cap: the budget is $750 total." in section(out, EN["constraints"])


def test_text_a_client_injects_as_the_user_gives_no_rule_and_no_goal() -> None:
    injected = "<command-name>/review</command-name> Let's always use the 2024 template."
    messages = [
        user("Fix the login bug."),
        assistant("Looking."),
        user(injected),
        assistant("Reviewing."),
    ]
    out = summarize(messages)
    assert section(out, EN["goal"]) == ["Fix the login bug."]
    assert not any("2024" in line for line in section(out, EN["constraints"]))
