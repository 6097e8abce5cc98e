"""Testing helpers for adopters (docs/architecture.md, "Layers"), as dramatiq ships its stub
broker and httpx its mock transport: the embedded stack (SQLite, in-process Redis, the real
producers and the real RQ job) with a fake auxiliary model, so a gateway's own tests compact
sessions with no server::

    from compaction.testing import embedded_stack

    def test_my_gateway_compacts() -> None:
        with embedded_stack() as stack:
            stack.store.create_session("s-1", messages=my_messages)
            stack.producers.request_manual("s-1")
            stack.work()                     # runs the queued job here, deterministically
            assert stack.model.prompts        # what the auxiliary model was asked
            view = stack.store.load_history("s-1", view="compacted")
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from compaction.embedded import Stack, running
from compaction.service.settings import Settings
from compaction.store.records import ChannelConfig
from compaction.worker.llm import ChatClient, Completion

#: the auxiliary channel the stack configures as the default one
CHANNEL = "fake-auxiliary"


@dataclass
class FakeAuxiliaryModel:
    """The auxiliary model's stand-in: answers each summary request with ``text`` (by default
    a summary long enough to pass the service's checks, naming the request's number) and keeps
    every prompt it was sent. Set ``error`` to make every call raise it: an ``LlmError`` (or
    ``LlmTimeout``) from ``compaction.core.errors`` is how a provider's failure reaches the
    job."""

    text: str | None = None
    input_tokens: int = 100
    output_tokens: int = 50
    error: Exception | None = None
    provider: str = "fake"
    model: str = CHANNEL
    prompts: list[str] = field(default_factory=list)

    def complete(self, prompt: str, max_tokens: int) -> Completion:
        self.prompts.append(prompt)
        if self.error is not None:
            raise self.error
        text = self.text or (
            f"## Goal\nFake summary {len(self.prompts)} written by compaction.testing.\n"
            + "The conversation's details are kept as the test gave them. " * 6
        )
        return Completion(text, self.input_tokens, self.output_tokens)


@dataclass
class TestStack(Stack):
    """The embedded stack (``store``, ``producers``, ``redis``, ``settings``, ``work()``) and
    its fake auxiliary model."""

    __test__ = False  # not a pytest test class

    model: FakeAuxiliaryModel = field(default_factory=FakeAuxiliaryModel)


@contextmanager
def embedded_stack(
    *,
    model: FakeAuxiliaryModel | None = None,
    worker_thread: bool = False,
    **settings: Any,
) -> Iterator[TestStack]:
    """A private stack for one test: its own SQLite file in a temporary folder, its own
    in-process Redis, ``model`` (a new ``FakeAuxiliaryModel`` by default) as the default
    auxiliary channel. Queued jobs run when the test calls ``work()``, or at once on a worker
    thread with ``worker_thread=True``. ``settings`` override the service's settings (the
    environment's ``COMPACTION_*`` variables still apply to the rest)."""
    model = model or FakeAuxiliaryModel()

    def client_for(channel: ChannelConfig) -> ChatClient:
        return model

    with tempfile.TemporaryDirectory(prefix="compaction-testing-") as folder:
        configured = Settings(
            **{"database_url": f"sqlite:///{Path(folder) / 'compaction.db'}", **settings}
        )
        with running(configured, client_factory=client_for, thread=worker_thread) as stack:
            stack.store.add_channel(
                CHANNEL, provider="openai-compatible", model=CHANNEL, auxiliary=True, default=True
            )
            yield TestStack(**{f.name: getattr(stack, f.name) for f in fields(stack)}, model=model)
