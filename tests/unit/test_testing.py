"""compaction.testing: the embedded stack an adopter's tests use (no server), running the real
producers and the real RQ job against its fake auxiliary model."""

from __future__ import annotations

from compaction.core.errors import LlmError
from compaction.testing import FakeAuxiliaryModel, embedded_stack
from tests.fakes import conversation


def test_a_manual_compaction_runs_on_the_fake_model() -> None:
    with embedded_stack() as stack:
        messages = conversation(10)
        stack.store.create_session("s-1", messages=messages)
        before = len(stack.store.load_history("s-1", view="compacted"))

        assert stack.producers.request_manual("s-1").status == "enqueued"
        stack.work()

        view = stack.store.load_history("s-1", view="compacted")
        assert len(view) < before
        assert sum(row.is_compaction_summary for row in view) == 1
        [prompt] = stack.model.prompts
        assert messages[4].content in prompt  # the middle reached the auxiliary model
        [run] = stack.store.runs("s-1")
        assert (run.status, run.input_tokens, run.output_tokens) == ("succeeded", 100, 50)


def test_a_failing_model_leaves_the_history_unchanged() -> None:
    model = FakeAuxiliaryModel(error=LlmError("the provider is down"))
    with embedded_stack(model=model) as stack:
        stack.store.create_session("s-1", messages=conversation(10))
        before = stack.store.load_history("s-1", view="full")

        stack.producers.request_manual("s-1")
        stack.work()

        after = stack.store.load_history("s-1", view="full")
        assert [r.message for r in after if r.metadata is None] == [r.message for r in before]
        [run] = stack.store.runs("s-1")
        assert (run.status, run.code) == ("failed", "llm_error")


def test_each_stack_is_private() -> None:
    with embedded_stack() as one, embedded_stack() as two:
        one.store.create_session("s-1", messages=conversation(2))
        assert not two.store.session_exists("s-1")
        assert one.settings.database_url != two.settings.database_url
