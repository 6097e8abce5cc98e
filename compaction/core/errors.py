"""Errors with stable codes (docs/architecture.md, "Error codes").

Every failure is reported with a code from ``ErrorCode``: a ``CompactionError`` subclass carries
it, a failed job publishes it in ``compaction_failed`` (an enum in the exported JSON Schema), and
the command line prints it as ``compaction: error [code]: message``. Gateways switch on it, so a
code never changes once published.

| code | meaning |
|---|---|
| `invalid_request` | malformed input: a message, a request field, a transcript file |
| `invalid_config` | a setting or a configuration value outside its documented range |
| `nothing_to_compact` | fewer than two messages between the protected head and the tail |
| `message_too_large` | a message written is alone over the session's threshold: split it |
| `system_prompt_too_large` | the system prompt alone reaches the threshold |
| `summary_too_short` | the auxiliary model returned an empty or too short summary |
| `summary_too_long` | the auxiliary model's summary is over twice `summary_max_tokens` |
| `session_not_found` | no session with that id |
| `lock_lost` | the session changed under the worker: nothing written |
| `worker_lost` | the worker running the request died (killed, out of memory) before answering |
| `db_error` | the database failed (the driver's first line only) |
| `no_auxiliary_model` | no auxiliary channel: not on the agent, no system default |
| `no_chat_model` | no channel answers a turn (docs/architecture.md, "Which channel answers") |
| `llm_timeout` | an attempt at the auxiliary (or the chat) model did not finish in time |
| `llm_error` | the auxiliary (or the chat) model answered an error, or no reply of its own |
| `internal_error` | a bug caught by the worker; the history is unchanged |
| `compaction_disabled` | `COMPACTION_ENABLED=false`: nothing is queued, a worker refuses a job |
| `busy` | a turn of the session is already running or queued (gateway only): nothing stored |
| `reply_too_long` | the chat model's reply is far past the turn's maximum: not stored (gateway) |
| `redis` | Redis is unreachable or failed (command line only) |
| `timeout` | no final event within `--timeout` (command line only) |
| `io_error` | a file could not be read or written (command line only) |
| `pins_over_threshold` | the pinned messages alone would reach the threshold: not pinned |
| `draft_stale` | the session changed since the draft and the draft no longer fits: not applied |
| `draft_closed` | the draft was applied, discarded or has expired |

`compaction_skipped` is not a failure; its `SkipCode`: `lock_held` (another run holds the
session), `already_pending` (the session is already queued), `suppressed` (the last two
compactions each saved under 10%), `below_threshold` (an auto request under the threshold),
`nothing_to_compact` (an auto request for a session with nothing between its protected head and
its minimal tail), `not_smaller` (a stage's result is not smaller than its input: not applied).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import ClassVar, Literal

from pydantic import ValidationError

ErrorCode = Literal[
    "invalid_request",
    "invalid_config",
    "nothing_to_compact",
    "message_too_large",
    "system_prompt_too_large",
    "summary_too_short",
    "summary_too_long",
    "session_not_found",
    "lock_lost",
    "worker_lost",
    "db_error",
    "no_auxiliary_model",
    "no_chat_model",
    "llm_timeout",
    "llm_error",
    "internal_error",
    "compaction_disabled",
    "busy",
    "reply_too_long",
    "redis",
    "timeout",
    "io_error",
    "pins_over_threshold",
    "draft_stale",
    "draft_closed",
]
SkipCode = Literal[
    "lock_held",
    "already_pending",
    "suppressed",
    "below_threshold",
    "nothing_to_compact",
    "not_smaller",
]


class CompactionError(Exception):
    """Base class: ``code`` is stable, ``str(err)`` is a one-line human message. Raise a
    subclass; the base's code marks an error nobody classified, i.e. a bug."""

    code: ClassVar[ErrorCode] = "internal_error"

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else self.code


class InvalidRequest(CompactionError, ValueError):
    """Malformed input: unknown role, non-string content, a tool result answering no call."""

    code = "invalid_request"


class NotFound(InvalidRequest):
    """An id or a name that names nothing stored (a channel, a run, an agent). Its code stays
    ``invalid_request``; a gateway answers it as not found (HTTP 404)."""


class Conflict(InvalidRequest):
    """Refused because of what is stored, not how it was asked: a name or id taken, a channel
    that agents use or that is the default. Its code stays ``invalid_request``; a gateway
    answers it as a conflict (HTTP 409)."""


class InvalidConfig(CompactionError, ValueError):
    """A configuration value outside its documented range."""

    code = "invalid_config"


class NothingToCompact(CompactionError):
    """The middle between the protected head and the tail holds fewer than two messages."""

    code = "nothing_to_compact"


class MessageTooLarge(CompactionError):
    """A message alone at or over its session's threshold, refused where it is written
    (docs/algorithm.md, "Bounds"): no compaction could make room for it."""

    code = "message_too_large"


class SystemPromptTooLarge(CompactionError):
    """The system prompt alone reaches the threshold (docs/architecture.md, "Error codes")."""

    code = "system_prompt_too_large"


class SummaryTooShort(CompactionError):
    """The auxiliary model returned an empty or too short summary (docs/architecture.md, "Error
    codes")."""

    code = "summary_too_short"


class SummaryTooLong(CompactionError):
    """The auxiliary model's summary is far over its budget (docs/architecture.md, "Error
    codes"): applying it would make the context larger, and every later run would send it."""

    code = "summary_too_long"


class SessionNotFound(CompactionError):
    code = "session_not_found"


class LockLost(CompactionError):
    """The session changed under a worker (its lock expired, another run won): nothing written."""

    code = "lock_lost"


class DatabaseError(CompactionError):
    code = "db_error"


class NoAuxiliaryModel(CompactionError):
    """No auxiliary channel: not on the agent, no system default (docs/architecture.md,
    "Settings")."""

    code = "no_auxiliary_model"


class NoChatModel(CompactionError):
    """The gateway has no model to answer a turn with (docs/architecture.md, "The gateway")."""

    code = "no_chat_model"


class CompactionDisabled(CompactionError):
    """Compaction is switched off (``COMPACTION_ENABLED=false``; docs/architecture.md,
    "Settings"): a manual request is refused before anything is queued."""

    code = "compaction_disabled"

    def __init__(self, message: str = "compaction is switched off (COMPACTION_ENABLED=false)"):
        super().__init__(message)


class Busy(CompactionError):
    """A turn of the session is running or queued, on this gateway or another
    (docs/architecture.md, "The gateway"): this one is refused before anything is stored."""

    code = "busy"


class ReplyTooLong(CompactionError):
    """The chat model's reply is far past the maximum the turn asked for (docs/architecture.md,
    "The gateway"): stored, it would fill the session's window and fail every compaction."""

    code = "reply_too_long"


class PinsOverThreshold(CompactionError):
    """The pinned messages with the system prompt would alone reach the session's threshold
    (docs/architecture.md, "Pins"): no compaction could bring it under, so not pinned."""

    code = "pins_over_threshold"


class DraftStale(CompactionError):
    """The session changed since a review's draft and the draft no longer fits
    (docs/architecture.md, "Review"): not applied, nothing changed."""

    code = "draft_stale"


class DraftClosed(CompactionError):
    """A review's draft that was applied, discarded or has expired (docs/architecture.md,
    "Review")."""

    code = "draft_closed"


class LlmTimeout(CompactionError):
    code = "llm_timeout"


class LlmError(CompactionError):
    code = "llm_error"


def one_line(err: ValidationError) -> str:
    """pydantic's report in one line: the first problem's field path and message. No URL, and
    no input: an input can be a secret (an API key, a whole message)."""
    problems = err.errors(include_url=False, include_input=False, include_context=False)
    first = problems[0]
    where = ".".join(str(part) for part in first["loc"])
    text = first["msg"].removeprefix("Value error, ")
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"{where}: {text}{more}" if where else f"{text}{more}"


def invalid_request(err: ValidationError, what: str) -> InvalidRequest:
    """``invalid_request`` for input that failed its model, e.g. ``what="compaction_requested"``."""
    return InvalidRequest(f"invalid {what}: {one_line(err)}")


def invalid_config(err: ValidationError, what: str) -> InvalidConfig:
    return InvalidConfig(f"invalid {what}: {one_line(err)}")


@contextmanager
def as_invalid_request(what: str) -> Iterator[None]:
    """Where a caller's values meet a pydantic model: its ``ValidationError`` becomes
    ``InvalidRequest``, so the Python API raises the project's errors only."""
    try:
        yield
    except ValidationError as err:
        raise invalid_request(err, what) from None
