"""Slash commands typed in the chat box (docs/architecture.md, "Events"): ``/compact`` and
``/compact <focus>``."""

from __future__ import annotations

import re
from dataclasses import dataclass

COMMANDS = frozenset({"compact"})
_COMMAND = re.compile(r"^/(?P<name>[a-z]+)(?:\s+(?P<argument>.*\S))?\s*$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class SlashCommand:
    name: str
    argument: str | None = None


def parse_slash_command(raw: str) -> SlashCommand | None:
    """``"/compact keep the schema"`` → ``SlashCommand("compact", "keep the schema")``;
    anything that is not a known command at the very start (``"hello /compact"``,
    ``"/compactx"``, ``""``) → ``None``."""
    match = _COMMAND.match(raw.strip()) if isinstance(raw, str) else None
    if match is None or match["name"] not in COMMANDS:
        return None
    return SlashCommand(match["name"], match["argument"])
