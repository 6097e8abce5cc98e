"""What the hostile-transcript tests share: a tool-call turn, a transcript file, a refusal."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def turn(arguments: Any, *, call_id: str = "call_1", name: str = "bash") -> list[dict[str, Any]]:
    """A user ask, an assistant call with ``arguments``, its result."""
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
    return [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call_id, "content": "ok"},
    ]


def write(tmp_path: Path, text: str, name: str = "transcript.json") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def assert_refused(result: tuple[int, str, str], *words: str) -> str:
    status, out, err = result
    assert (status, out) == (1, ""), err
    [line] = err.splitlines()
    assert line.startswith("compaction: error [invalid_request]: "), line
    for word in words:
        assert word in line, line
    return line
