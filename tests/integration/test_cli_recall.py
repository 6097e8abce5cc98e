"""``compaction recall SESSION QUERY`` (cli/recall.py; docs/architecture.md, "Recall") through
``cli.main`` on SQLite and PostgreSQL: the compacted original as text and as JSON, and a bad
budget as one ``invalid_request`` line."""

from __future__ import annotations

import json
from collections.abc import Callable

from compaction.store import Store
from tests.integration.helpers import compact_session, new_session
from tests.integration.test_store_recall import SECRET, planted

Command = Callable[..., tuple[int, str, str]]


def test_recall_prints_the_original(store: Store, command: Command) -> None:
    session_id, _ids = new_session(store, planted())
    compact_session(store, session_id)
    status, out, err = command("recall", session_id, "deploy_key_alpha")
    assert status == 0, err
    assert out.startswith("Compacted originals matching 'deploy_key_alpha' (1 of 1):")
    assert "tool (bash)]" in out and "deploy_key_alpha" in out and SECRET not in out
    status, out, _ = command("recall", session_id, "deploy_key_alpha", "--json")
    answer = json.loads(out)
    assert status == 0 and answer["results"][0]["toolName"] == "bash"
    status, out, _ = command("recall", session_id, "nothing_like_this")
    assert status == 0 and out.startswith("No compacted message matches")
    status, _out, err = command("recall", session_id, "x", "--max-tokens", "5")
    assert status != 0 and "invalid_request" in err and "maxTokens" in err


def test_recall_shows_the_part_of_a_long_original_that_matched(
    store: Store, command: Command
) -> None:
    """The planted key ends a 3,000-character tool result: a small budget cuts the result
    around it, and says so, rather than keeping its head."""
    session_id, _ids = new_session(store, planted())
    compact_session(store, session_id)
    status, out, err = command("recall", session_id, "deploy_key_alpha", "--max-tokens", "100")
    assert status == 0, err
    assert "tool (bash)]\n… [" in out and "characters before] …" in out
    assert out.rstrip().endswith("deploy_key_alpha") and SECRET not in out
