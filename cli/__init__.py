"""The ``compaction`` command (DESIGN §8): one module per group of subcommands.

Every subcommand exits 0 on success and non-zero with a one-line error on stderr otherwise.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import redis
from sqlalchemy.exc import SQLAlchemyError

from cli import compact, demo, ingress, migrate, schemas, sessions, settings_cmds, worker
from compaction.errors import CompactionError
from service import logs


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="compaction", description="Context compaction service for LLM agents."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo.register(commands)
    sessions.register(commands)
    compact.register(commands)
    settings_cmds.register(commands)
    migrate.register(commands)
    worker.register(commands)
    schemas.register(commands)
    ingress.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # Every command's logs, ours (structlog) and the libraries', as JSON lines on stderr;
    # stdout stays the command's output.
    logs.configure(getattr(args, "log_level", "WARNING"))
    try:
        code: int = args.run(args)
    except CompactionError as err:
        print(f"compaction: error [{err.code}]: {err.message}", file=sys.stderr)
        return 1
    except SQLAlchemyError as err:
        # The driver's first line: no statement, no parameters, no password.
        lines = str(getattr(err, "orig", None) or err).strip().splitlines() or [repr(err)]
        print(f"compaction: error [db_error]: {lines[0]}", file=sys.stderr)
        return 1
    except TimeoutError as err:
        print(f"compaction: error [timeout]: {err}", file=sys.stderr)
        return 1
    except redis.RedisError as err:
        print(
            f"compaction: error [redis]: {err} (is Redis running at COMPACTION_REDIS_URL?)",
            file=sys.stderr,
        )
        return 1
    except (OSError, ValueError) as err:
        print(f"compaction: error: {err}", file=sys.stderr)
        return 1
    return code
