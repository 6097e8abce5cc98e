"""Structured logs (docs/architecture.md, "Logs and metrics"): one JSON object per line on stderr.

Our code logs with ``structlog.get_logger(name)`` and keyword fields; libraries (RQ, the SDKs)
log through the standard ``logging`` module. Both go through one stdlib handler whose
``structlog.stdlib.ProcessorFormatter`` renders every record alike: ``ts`` (ISO 8601, UTC),
``level``, ``logger``, ``msg``, then the fields (a stdlib record's ``extra`` included). API keys
never reach a log call: channels hold them as ``SecretStr`` and error text is scrubbed.
"""

from __future__ import annotations

import logging
import sys

import structlog
from structlog.typing import EventDict, Processor, WrappedLogger

#: what both kinds of record get before rendering
_SHARED: list[Processor] = [
    structlog.contextvars.merge_contextvars,
    structlog.stdlib.add_log_level,
    structlog.stdlib.add_logger_name,
    structlog.processors.TimeStamper(fmt="iso", utc=True, key="ts"),
]


def _head_first(_logger: WrappedLogger, _method: str, event: EventDict) -> EventDict:
    """``ts``, ``level``, ``logger`` and ``msg`` lead each line, whatever the fields."""
    head = {key: event.pop(key) for key in ("ts", "level", "logger", "msg") if key in event}
    head.update(event)
    return head


def formatter() -> logging.Formatter:
    """The JSON-lines formatter of every record, structlog's and the standard library's."""
    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[*_SHARED, structlog.stdlib.ExtraAdder()],
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            structlog.processors.EventRenamer("msg"),
            _head_first,
            structlog.processors.JSONRenderer(ensure_ascii=False),
        ],
    )


def configure(level: str = "INFO") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    structlog.configure(
        processors=[
            structlog.stdlib.filter_by_level,
            *_SHARED,
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        # Not cached: loggers made at import follow a later configure() (and the tests'
        # structlog.testing.capture_logs).
        cache_logger_on_first_use=False,
    )
