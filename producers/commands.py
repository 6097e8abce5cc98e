"""Slash commands typed in the chat box (docs/architecture.md, "Events"): ``/compact``,
``/compact <focus>`` and ``/compact --review [focus]`` (a draft to review first:
docs/architecture.md, "Review")."""

from __future__ import annotations

import re
from dataclasses import dataclass

COMMANDS = frozenset({"compact"})
_COMMAND = re.compile(r"^/(?P<name>[a-z]+)(?:\s+(?P<argument>.*\S))?\s*$", re.DOTALL)
_REVIEW = re.compile(r"^--review(?:\s+(?P<focus>.*))?$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class SlashCommand:
    name: str
    argument: str | None = None
    #: ``/compact --review``: write a draft to review instead of applying
    review: bool = False


def parse_slash_command(raw: str) -> SlashCommand | None:
    """``"/compact keep the schema"`` → ``SlashCommand("compact", "keep the schema")``;
    anything that is not a known command at the very start (``"hello /compact"``,
    ``"/compactx"``, ``""``) → ``None``."""
    match = _COMMAND.match(raw.strip()) if isinstance(raw, str) else None
    if match is None or match["name"] not in COMMANDS:
        return None
    argument = match["argument"]
    review = _REVIEW.match(argument or "")
    if review is not None:
        return SlashCommand(match["name"], review["focus"], review=True)
    return SlashCommand(match["name"], argument)
