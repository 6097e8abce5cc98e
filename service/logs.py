"""Structured logs (docs/architecture.md, "Logs and metrics"): one JSON object per line on stderr.

Our code logs with ``get_logger(name)`` and keyword fields; each call becomes a record of the
standard library's logger ``name``, the fields its ``extra``. So a program that embeds the
producers (a gateway) decides where they go with its own ``logging`` configuration, and one that
configures nothing gets nothing on stdout. Our commands call ``configure()``: one stderr handler
whose ``structlog.stdlib.ProcessorFormatter`` renders every record alike, ours and the
libraries' (RQ, the SDKs): ``ts`` (ISO 8601, UTC), ``level``, ``logger``, ``msg``, then the
fields. API keys never reach a log call: channels hold them as ``SecretStr`` and error text is
scrubbed. The gateway token can: WebSocket and SSE URLs carry it as ``?token=`` and uvicorn logs
each URL, so every line is written with its tokens masked (``mask_tokens``), whoever logged it.
"""

from __future__ import annotations

import logging
import re
import sys
from typing import Any

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


#: a ``token=`` query parameter's value or a ``Bearer`` credential, up to the value's end in a URL
#: (``&``, ``#``) or in the JSON string it is quoted in (a quote, or the backslash of an escape)
_TOKEN = re.compile(r"((?i:token=)|\bBearer\s+)[^\s&#\"'\\]+")


def mask_tokens(text: str) -> str:
    """``text`` with every ``token=...`` as ``token=***`` and ``Bearer ...`` as ``Bearer ***``:
    the gateway token is never logged (docs/architecture.md, "The gateway")."""
    return _TOKEN.sub(r"\1***", text)


def _masked(_logger: WrappedLogger, _method: str, line: Any) -> Any:
    """The rendered line masked: message, fields and traceback alike, whatever their type."""
    return mask_tokens(line)


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
            _masked,
        ],
    )


#: attributes of a ``logging.LogRecord``: a field of the same name would overwrite them
_RECORD_ATTRIBUTES = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
}


def _keep_record_attributes(_logger: WrappedLogger, _method: str, event: EventDict) -> EventDict:
    """A field named like a record attribute (``name``, ``module``...) gets a ``field_`` prefix
    instead of failing the log call."""
    for key in [k for k in event if k in _RECORD_ATTRIBUTES and k != "exc_info"]:
        event[f"field_{key}"] = event.pop(key)
    return event


_TO_STDLIB: list[Processor] = [
    structlog.stdlib.filter_by_level,
    _keep_record_attributes,
    structlog.stdlib.render_to_log_kwargs,
]


def get_logger(name: str) -> Any:
    """A ``structlog`` logger (keyword fields) over the standard library's logger ``name``."""
    return structlog.wrap_logger(
        logging.getLogger(name),
        processors=_TO_STDLIB,
        wrapper_class=structlog.stdlib.BoundLogger,
    )


#: the per-turn decision line (the second seed's ``[COMPACT]`` log: the tokens per segment and
#: the pre-call decision of each model call; ``producers/stats.py``): at INFO, and shown by a
#: default run (WARNING, which keeps everything else quiet); hidden only by ERROR and above
DECISIONS = "compaction.decision"

#: the loggers that libraries configure for themselves: uvicorn's (its default ``log_config``)
#: and RQ's (a worker's ``work()`` sets their level, and gives them handlers of their own when
#: nothing above them has one)
SELF_CONFIGURED = ("uvicorn", "uvicorn.error", "uvicorn.access", "rq.worker", "rq.job")


def configure(level: str = "INFO") -> None:
    """Every record, ours and the libraries', as one JSON line on stderr from ``level`` up."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    shown = root.level <= logging.WARNING
    logging.getLogger(DECISIONS).setLevel(logging.INFO if shown else logging.NOTSET)
    # Their own handlers would print outside the one format (uvicorn's, the gateway token
    # unmasked) and their own levels drop lines: back through the one door.
    for name in SELF_CONFIGURED:
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.setLevel(logging.NOTSET)
        logger.propagate = True
