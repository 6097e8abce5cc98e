"""An offline summary updating a previous one, and the budget it keeps to
(compaction/core/offline.py)."""

from __future__ import annotations

from compaction.core.messages import Message
from tests.unit.builders import assistant, tool, user
from tests.unit.offline_helpers import EN, NONE, ZH, bash, conversation, section, summarize

# --------------------------------------------------------------------------- update


def test_update_keeps_previous_lines_and_first_goal() -> None:
    previous = summarize(conversation(), budget=12_000)
    later = [
        user("Next, add a changelog entry. Do not bump the version."),
        assistant("", bash("git log --oneline -3", "c9")),
        tool("fatal: your current branch has no commits yet", "c9"),
        user("Then open a PR"),
    ]
    out = summarize(later, previous=previous, budget=12_000)
    assert section(out, EN["goal"]) == section(previous, EN["goal"])
    assert "Extractive" in out
    # "Next steps" describes the latest state: an update replaces it (checked below).
    for key in ("constraints", "done", "blocked", "decisions", "files", "tools"):
        old = section(previous, EN[key])
        new = section(out, EN[key])
        for line in old:
            if line != NONE["en"]:
                assert line in new, (key, line)
    assert "ran `git log --oneline -3`" in section(out, EN["done"])
    assert "fatal: your current branch has no commits yet" in section(out, EN["blocked"])
    assert "Do not bump the version." in section(out, EN["constraints"])
    assert section(out, EN["next"])[-1] == "Then open a PR"
    # Old lines first, then new ones.
    done = section(out, EN["done"])
    assert done.index("ran `pytest tests/test_parser.py -x`") < done.index(
        "ran `git log --oneline -3`"
    )


def test_update_does_not_duplicate_lines() -> None:
    previous = summarize(conversation(), budget=12_000)
    out = summarize(conversation(), previous=previous, budget=12_000)
    for key in EN:
        if key == "progress":
            continue
        items = section(out, EN[key])
        assert len(items) == len(set(items)), key
    assert out == previous


def test_update_drops_none_recorded_placeholder() -> None:
    previous = summarize([assistant("ok")], budget=12_000)
    out = summarize([assistant("", bash("make")), tool("ok")], previous=previous, budget=12_000)
    assert section(out, EN["done"]) == ["ran `make`"]


def test_update_in_chinese() -> None:
    previous = summarize(
        [user("目标：迁移到新框架"), assistant("好")], language="zh", budget=12_000
    )
    out = summarize(
        [user("必须保留旧接口"), assistant("", bash("pytest")), tool("ok")],
        previous=previous,
        language="zh",
        budget=12_000,
    )
    assert section(out, ZH["goal"]) == ["目标：迁移到新框架"]
    assert "必须保留旧接口" in section(out, ZH["constraints"])
    assert section(out, ZH["done"]) == ["ran `pytest`"]


# --------------------------------------------------------------------------- budget


def test_small_budget_keeps_at_least_two_newest_items() -> None:
    messages: list[Message] = [user("Run everything")]
    for i in range(8):
        messages += [
            assistant("", bash(f"step_{i}.sh", f"c{i}")),
            tool(f"ValueError: e{i}", f"c{i}"),
        ]
    out = summarize(messages, budget=1)
    assert section(out, EN["done"]) == ["ran `step_6.sh`", "ran `step_7.sh`"]
    assert section(out, EN["blocked"]) == ["ValueError: e6", "ValueError: e7"]
    assert section(out, EN["files"]) == ["step_6.sh", "step_7.sh"]


def test_large_budget_keeps_more() -> None:
    messages: list[Message] = [user("Run everything")]
    for i in range(8):
        messages += [assistant("", bash(f"step_{i}.sh", f"c{i}")), tool("ok", f"c{i}")]
    small = summarize(messages, budget=1)
    large = summarize(messages, budget=12_000)
    assert len(section(large, EN["done"])) == 8
    assert len(large) > len(small)


def test_small_budget_with_one_item_keeps_it() -> None:
    out = summarize([user("go"), assistant("", bash("make")), tool("ok")], budget=1)
    assert section(out, EN["done"]) == ["ran `make`"]
