"""``parse_slash_command`` (docs/architecture.md, "Events")."""

from __future__ import annotations

import pytest

from compaction.producers.commands import SlashCommand, parse_slash_command


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("/compact", SlashCommand("compact", None)),
        ("  /compact  ", SlashCommand("compact", None)),
        ("/compact keep the schema", SlashCommand("compact", "keep the schema")),
        ("/compact   keep\nthe schema  ", SlashCommand("compact", "keep\nthe schema")),
        ("/compact 保留数据库结构", SlashCommand("compact", "保留数据库结构")),
    ],
)
def test_commands(raw: str, expected: SlashCommand) -> None:
    assert parse_slash_command(raw) == expected


@pytest.mark.parametrize(
    "raw", ["", "   ", "hello /compact", "/compactx", "/Compact", "/unknown", "compact", "/"]
)
def test_not_commands(raw: str) -> None:
    assert parse_slash_command(raw) is None
