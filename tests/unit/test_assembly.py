"""Phase 4: head + summary + tail with orphans repaired (compaction/core/assembly.py;
docs/architecture.md, "The algorithm")."""

from __future__ import annotations

from compaction.core.assembly import ORPHAN_RESULT, assemble
from compaction.core.messages import Message
from compaction.core.validate import problems
from tests.unit.builders import assistant, summary, system, tool, user

PLACEHOLDER = ORPHAN_RESULT["en"]
SUMMARY = summary("what happened in the middle")


def shape(messages: list[Message]) -> list[str]:
    """A compact picture of a list: ``S``, ``U``, ``Z``, ``A``, ``A:c1,c2``, ``T:c1``,
    ``P:c1`` (a placeholder result)."""
    out = []
    for m in messages:
        if m.role == "tool":
            out.append(f"{'P' if m.content == PLACEHOLDER else 'T'}:{m.tool_call_id}")
        elif m.is_summary:
            out.append("Z")
        elif m.tool_calls:
            out.append("A:" + ",".join(c.id for c in m.tool_calls))
        else:
            out.append(m.role[0].upper())
    return out


def test_placeholders_exist_in_both_languages() -> None:
    assert ORPHAN_RESULT["zh"] == "[结果来自已压缩的历史 -- 见上方摘要]"  # the seed's text
    assert ORPHAN_RESULT["en"]


def test_nothing_to_repair() -> None:
    head = [system(), user("task"), assistant("plan")]
    tail = [assistant("step", "c5"), tool("out", "c5"), user("next"), assistant("ok")]
    out = assemble(head, SUMMARY, tail, PLACEHOLDER)
    assert out == [*head, SUMMARY, *tail]
    assert problems(out) == []


def test_orphan_result_in_the_tail_is_dropped() -> None:
    # The middle held assistant(c1); its result c1 landed in the tail.
    head = [system(), user("task"), assistant("plan")]
    tail = [tool("orphan output", "c1"), assistant("done"), user("next"), assistant("ok")]
    out = assemble(head, SUMMARY, tail, PLACEHOLDER)
    assert shape(out) == ["S", "U", "A", "Z", "A", "U", "A"]
    assert all(m.tool_call_id != "c1" for m in out)
    assert problems(out) == []


def test_only_the_orphan_of_parallel_results_is_dropped() -> None:
    head = [system(), user("task"), assistant("plan")]
    tail = [
        tool(call_id="c1"),
        assistant("again", "c2"),
        tool(call_id="c2"),
        user("u"),
        assistant("a"),
    ]
    out = assemble(head, SUMMARY, tail, PLACEHOLDER)
    assert shape(out) == ["S", "U", "A", "Z", "A:c2", "T:c2", "U", "A"]
    assert problems(out) == []


def test_head_call_whose_result_went_to_the_middle_gets_a_placeholder() -> None:
    head = [system(), user("task"), assistant("reading", "c1")]
    tail = [user("next"), assistant("ok")]
    out = assemble(head, SUMMARY, tail, PLACEHOLDER)
    assert shape(out) == ["S", "U", "A:c1", "P:c1", "Z", "U", "A"]
    filler = out[3]
    assert filler.role == "tool"
    assert filler.tool_call_id == "c1"
    assert filler.content == PLACEHOLDER
    assert problems(out) == []


def test_placeholder_goes_after_the_results_the_call_still_has() -> None:
    head = [system(), user("task"), assistant("reading", "c1", "c2", "c3"), tool("a", "c1")]
    tail = [user("next"), assistant("ok")]
    out = assemble(head, SUMMARY, tail, PLACEHOLDER)
    assert shape(out) == ["S", "U", "A:c1,c2,c3", "T:c1", "P:c2", "P:c3", "Z", "U", "A"]
    assert out[3].content == "a"
    assert problems(out) == []


def test_parallel_calls_in_the_tail_with_one_result_missing() -> None:
    head = [system(), user("task"), assistant("plan")]
    tail = [
        assistant("three reads", "c1", "c2", "c3"),
        tool(call_id="c1"),
        tool(call_id="c3"),
        user("next"),
    ]
    out = assemble(head, SUMMARY, tail, PLACEHOLDER)
    assert shape(out) == ["S", "U", "A", "Z", "A:c1,c2,c3", "T:c1", "T:c3", "P:c2", "U"]
    assert problems(out) == []


def test_unanswered_call_at_the_very_end_gets_a_placeholder() -> None:
    head = [system(), user("task"), assistant("plan")]
    tail = [user("next"), assistant("calling", "c9")]
    out = assemble(head, SUMMARY, tail, PLACEHOLDER)
    assert shape(out) == ["S", "U", "A", "Z", "U", "A:c9", "P:c9"]
    assert problems(out) == []


def test_both_repairs_at_once_and_the_zh_placeholder() -> None:
    placeholder = ORPHAN_RESULT["zh"]
    head = [system(), user("任务"), assistant("读取", "c1")]
    tail = [tool("孤儿", "c7"), assistant("继续", "c8", "c9"), tool(call_id="c9"), user("下一步")]
    out = assemble(head, SUMMARY, tail, placeholder)
    assert [(m.role, m.tool_call_id, m.content) for m in out if m.role == "tool"] == [
        ("tool", "c1", placeholder),
        ("tool", "c9", "ok"),
        ("tool", "c8", placeholder),
    ]
    assert problems(out) == []


def test_summary_sits_between_head_and_tail() -> None:
    head = [system(), user("task"), assistant("plan")]
    tail = [user("next"), assistant("ok")]
    out = assemble(head, SUMMARY, tail, PLACEHOLDER)
    assert out[len(head)] is SUMMARY
    assert out[: len(head)] == head
    assert out[len(head) + 1 :] == tail


def test_inputs_are_not_modified() -> None:
    head = [system(), user("task"), assistant("reading", "c1")]
    tail = [tool(call_id="c0"), user("next")]
    head_copy, tail_copy = list(head), list(tail)
    assemble(head, SUMMARY, tail, PLACEHOLDER)
    assert head == head_copy
    assert tail == tail_copy


def test_result_kept_apart_from_its_head_call_is_invalid() -> None:
    head = [system(), user("task"), assistant("reading", "c1")]
    tail = [tool("late", "c1"), user("next"), assistant("ok")]
    out = assemble(head, SUMMARY, tail, PLACEHOLDER)
    assert problems(out) == []
