"""The turns to summarize, gathered in one pass (compaction/core/turns.py)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from compaction.core.turns import Turns
from tests.unit.builders import assistant, call, summary, tool, user


def test_turns_skip_summaries_and_collect_what_the_steps_read() -> None:
    pruned = tool("[cleared]", "c1", original_content="Traceback: boom")
    messages = [
        summary("earlier"),
        user("run it"),
        assistant("on it", call('{"command": "make"}', "bash", "c1")),
        pruned,
        assistant("done"),
    ]
    turns = Turns.of(messages)
    assert turns.messages == messages[1:]
    assert turns.texts == ["run it", "on it", '{"command": "make"}', "Traceback: boom", "done"]
    assert turns.spoken == ["run it", "Traceback: boom"]  # originals, user and tool only
    assert [c.id for c in turns.calls] == ["c1"]


@given(st.lists(st.text(alphabet="ab c\n\t日", max_size=30), max_size=40))
def test_distinct_words_are_every_word_once_in_order_of_first_appearance(
    texts: list[str],
) -> None:
    turns = Turns.of([user(t) for t in texts])
    assert turns.distinct_words() == list(dict.fromkeys(" ".join(texts).split()))


def test_the_texts_of_escaped_arguments_are_their_strings() -> None:
    arguments = json.dumps({"content": "line one\nsrc/app.py"})
    turns = Turns.of([assistant("", call(arguments, "write", "c1")), tool("ok", "c1")])
    assert turns.texts == ["", "line one\nsrc/app.py", "ok"]
    assert "src/app.py" in turns.distinct_words()
