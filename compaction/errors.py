"""Errors with stable codes (DESIGN §7).

Every failure the core can report is a ``CompactionError`` subclass whose ``code`` is part of
the wire contract: gateways switch on it, so codes never change once published.
"""

from __future__ import annotations


class CompactionError(Exception):
    """Base class: ``code`` is stable, ``str(err)`` is a one-line human message."""

    code: str = "compaction_error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else self.code


class InvalidRequest(CompactionError, ValueError):
    """Malformed input: unknown role, non-string content, a tool result answering no call."""

    code = "invalid_request"


class InvalidConfig(CompactionError, ValueError):
    """A configuration value outside its documented range."""

    code = "invalid_config"


class NothingToCompact(CompactionError):
    """The middle between the protected head and the tail holds fewer than two messages."""

    code = "nothing_to_compact"


class MessageTooLarge(CompactionError):
    """One message that must be kept is alone larger than the threshold (seed §10)."""

    code = "message_too_large"


class SystemPromptTooLarge(CompactionError):
    """The system prompt alone reaches the threshold (seed §10)."""

    code = "system_prompt_too_large"


class SummaryTooShort(CompactionError):
    """The auxiliary model returned an empty or too short summary (seed §9)."""

    code = "summary_too_short"


class SessionNotFound(CompactionError):
    code = "session_not_found"


class LockLost(CompactionError):
    """The session changed under a worker (its lock expired, another run won): nothing written."""

    code = "lock_lost"


class DatabaseError(CompactionError):
    code = "db_error"


class NoAuxiliaryModel(CompactionError):
    """No auxiliary channel: not on the agent, no system default (seed §4.1)."""

    code = "no_auxiliary_model"


class LlmTimeout(CompactionError):
    code = "llm_timeout"


class LlmError(CompactionError):
    code = "llm_error"
