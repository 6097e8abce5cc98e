"""The summarizer a job uses: the session's auxiliary channel, resolved on first use (an auto
request that pruning alone settles never needs one), with the opt-in extractive fallback."""

from __future__ import annotations

import logging

from compaction.core.engine import SummaryRequest
from compaction.core.errors import (
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


class ChannelSummarizer:
    def __init__(self, runtime: Runtime, agent_id: str | None) -> None:
        self.runtime = runtime
        self.agent_id = agent_id
        self._llm: LlmSummarizer | None = None
        self.model: str | None = None
        self.fell_back = False

    @property
    def calls(self) -> int:
        return self._llm.calls if self._llm else 0

    def _summarizer(self) -> LlmSummarizer:
        if self._llm is None:
            channel = self.runtime.auxiliary_channel(self.agent_id)
            client = self.runtime.client_for(channel)
            self._llm, self.model = LlmSummarizer(client), client.model
        return self._llm

    def summarize(self, request: SummaryRequest) -> Completion | str:
        try:
            reply = self._summarizer().summarize(request)
            if self.runtime.settings.fallback_summary:
                request.accepted(reply.text)  # one the engine would refuse: fall back instead
            return reply
        except (LlmError, LlmTimeout, NoAuxiliaryModel, SummaryTooShort, SummaryTooLong) as err:
            if not self.runtime.settings.fallback_summary:
                raise
            # No channel at all is a configuration (the demo's); a failing one is news.
            level = logging.INFO if isinstance(err, NoAuxiliaryModel) else logging.WARNING
            log.log(level, "extractive fallback summary", code=err.code)
            self.fell_back, self.model = True, "extractive-fallback"
            return OfflineSummarizer().summarize(request)
