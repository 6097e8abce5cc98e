"""The summarizer a job uses: the session's auxiliary channel, resolved on first use (an auto
request that pruning alone settles never needs one), and the offline extractive summarizer where
it may stand in (docs/architecture.md, "The algorithm"): while no auxiliary channel is configured,
in the embedded mode (``Runtime.offline_without_channel``) or with ``COMPACTION_FALLBACK_SUMMARY``;
after the model failed or its summary was refused, only with ``COMPACTION_FALLBACK_SUMMARY``.
Whichever wrote a stage's summary is said on its done event, its row and its run record."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from compaction.core.contract import SummaryWriter
from compaction.core.engine import SummaryRequest
from compaction.core.errors import (
    CompactionError,
    LlmError,
    LlmTimeout,
    NoAuxiliaryModel,
    SummaryTooLong,
    SummaryTooShort,
)
from compaction.core.offline import OfflineSummarizer
from compaction.service import logs
from compaction.worker.llm import Completion, LlmSummarizer
from compaction.worker.runtime import Runtime

log = logs.get_logger(__name__)

#: the run record's model when the offline summarizer wrote the summary
OFFLINE_MODEL = "extractive-fallback"


@dataclass(frozen=True, slots=True)
class Written:
    """Who wrote a stage's summary (``None``: no summary) and the model its run record names."""

    summarizer: SummaryWriter | None
    model: str | None
    #: the auxiliary channel's prices per million input and output tokens (the run's cost)
    prices: tuple[float | None, float | None] = (None, None)


class ChannelSummarizer:
    def __init__(self, runtime: Runtime, agent_id: str | None) -> None:
        self.runtime = runtime
        self.agent_id = agent_id
        self._llm: LlmSummarizer | None = None
        self.model: str | None = None
        self.prices: tuple[float | None, float | None] = (None, None)
        #: who wrote the summaries of the stage at hand (``written`` starts the next one)
        self._writers: set[SummaryWriter] = set()

    @property
    def calls(self) -> int:
        return self._llm.calls if self._llm else 0

    def _summarizer(self) -> LlmSummarizer:
        if self._llm is None:
            channel = self.runtime.auxiliary_channel(self.agent_id)
            client = self.runtime.client_for(channel)
            self._llm, self.model = LlmSummarizer(client), client.model
            self.prices = (channel.price_input_per_mtok, channel.price_output_per_mtok)
        return self._llm

    def summarize(self, request: SummaryRequest) -> Completion | str:
        fallback = self.runtime.settings.fallback_summary
        try:
            reply = self._summarizer().summarize(request)
            if fallback:
                request.accepted(reply.text)  # one the engine would refuse: fall back instead
        except NoAuxiliaryModel as err:
            if not (fallback or self.runtime.offline_without_channel):
                raise
            return self._offline(request, err, logging.INFO)  # a configuration (the demo's)
        except (LlmError, LlmTimeout, SummaryTooShort, SummaryTooLong) as err:
            if not fallback:
                raise
            return self._offline(request, err, logging.WARNING)  # a failing channel is news
        self._writers.add("model")
        return reply

    def _offline(self, request: SummaryRequest, err: CompactionError, level: int) -> str:
        log.log(level, "extractive fallback summary", code=err.code)
        self._writers.add("offline")
        return OfflineSummarizer().summarize(request)

    def written(self) -> Written:
        """Who wrote the stage's summary: ``offline`` when any part of it was the extractive
        summary. Called once per stage, as it is written; the next stage starts afresh."""
        writers, self._writers = self._writers, set()
        if "offline" in writers:
            return Written("offline", OFFLINE_MODEL)
        return Written("model" if writers else None, self.model, self.prices)
