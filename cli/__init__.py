"""The ``compaction`` command (docs/architecture.md, "Layers"): one module per group of subcommands.

Every subcommand exits 0 on success; a failure prints one line on stderr,
``compaction: error [code]: message``, and exits 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import redis
from pydantic import ValidationError
from sqlalchemy.exc import SQLAlchemyError

from compaction.cli import (
    agents,
    channels,
    common,
    compact,
    demo,
    drafts,
    gateway,
    ingress,
    migrate,
    pins,
    recall,
    schemas,
    sessions,
    worker,
)
from compaction.core.errors import CompactionError, ErrorCode, one_line
from compaction.service import logs
from compaction.store.db import database_error


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="compaction", description="Context compaction service for LLM agents."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo.register(commands)
    sessions.register(commands)
    compact.register(commands)
    drafts.register(commands)
    pins.register(commands)
    recall.register(commands)
    channels.register(commands)
    agents.register(commands)
    migrate.register(commands)
    worker.register(commands)
    schemas.register(commands)
    ingress.register(commands)
    gateway.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # Every command's logs, ours (structlog) and the libraries', as JSON lines on stderr;
    # stdout stays the command's output.
    logs.configure(getattr(args, "log_level", "WARNING"))
    try:
        code: int = args.run(args)
    except (CompactionError, SQLAlchemyError, redis.RedisError, OSError, ValueError) as err:
        print(error_line(err), file=sys.stderr)
        return 1
    return code


def error_line(err: Exception) -> str:
    """``compaction: error [code]: message``: the one line a failed command prints
    (docs/architecture.md, "Error codes")."""
    return common.error_line(*_describe(err))


def _describe(err: Exception) -> tuple[ErrorCode, str]:
    if isinstance(err, CompactionError):
        return err.code, err.message
    if isinstance(err, SQLAlchemyError):  # migrations and engines, outside the store's sessions
        failed = database_error(getattr(err, "orig", None) or err)
        return failed.code, failed.message
    if isinstance(err, redis.RedisError):
        return "redis", f"{err} (is Redis running at COMPACTION_REDIS_URL?)"
    if isinstance(err, TimeoutError):
        return "timeout", str(err)
    if isinstance(err, OSError):
        return "io_error", str(err)
    if isinstance(err, ValidationError):  # pydantic's report is many lines, with the input
        return "invalid_request", one_line(err)
    return "invalid_request", str(err)
