"""``compaction compact --wait`` with no worker (docs/architecture.md, "Error codes"): the
request waits on the test's own namespace of the shared Redis, no final event comes, and the
command prints one line, ``timeout``, and exits 1."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.services import RedisNamespace


def test_no_final_event_within_the_timeout(
    command: Callable[..., tuple[int, str, str]],
    redis_namespace: RedisNamespace,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    for name, value in redis_namespace.env().items():
        monkeypatch.setenv(name, value)
    transcript = tmp_path / "transcript.json"
    transcript.write_text('[{"role": "user", "content": "hi"}]', encoding="utf-8")
    assert command("import", str(transcript), "--session", "s1")[0] == 0

    status, out, err = command("compact", "s1", "--wait", "--timeout", "0.2")

    assert (status, out) == (1, "")
    assert err == "compaction: error [timeout]: no final event for session 's1' within 0.2 s\n"
