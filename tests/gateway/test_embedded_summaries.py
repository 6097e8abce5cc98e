"""The one-command console's summaries (docs/architecture.md, "The gateway", "The algorithm"):
the embedded gateway, served over HTTP as ``compaction gateway`` serves it with nothing
configured, writes the offline extractive summary only while no auxiliary channel is
configured, and says so (the done event's ``summarizer``, the run's model, the done row). Once
the user adds a channel, a failing one fails the request: the history stays as it was and no
summary the model never wrote is shown as the model's."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from compaction.gateway.embedded import Bundled, embedded
from compaction.gateway.resources import GatewayOptions
from compaction.service.keys import events_stream
from compaction.service.settings import Settings
from compaction.store import Store
from tests.gateway.conftest import serve
from tests.integration.worker_helpers import wait_until
from tests.llm_server import FakeLLM, Reply
from tests.services import stream_entries
from tests.unit.builders import system, user
from tests.unit.test_loop import REQUEST, steps

SESSION = "one-request"


@dataclass
class Console:
    client: httpx.Client
    store: Store
    events: Any  # the in-process Redis
    prefix: str

    def compact(self) -> dict[str, Any]:
        """``/compact`` through the API; the request's final event."""
        answer = self.client.post(f"/api/sessions/{SESSION}/compact", json={})
        assert answer.status_code == 202, answer.text
        request_id = answer.json()["requestId"]
        return wait_until(lambda: self._final(request_id), "the request's final event")

    def _final(self, request_id: str) -> dict[str, Any] | None:
        for _id, fields in stream_entries(self.events, events_stream(self.prefix)):
            event = json.loads(fields[b"event"])
            final = event["type"] != "compaction_start" and not event.get("nextStage")
            if event.get("requestId") == request_id and final:
                return dict(event)
        return None


@pytest.fixture
def console(tmp_path: Any) -> Iterator[Console]:
    """The embedded gateway on the defaults a new user gets (no fallback setting of theirs),
    one bundled single-request session; no token: the loopback only."""
    bundled = [Bundled(SESSION, [system(), user(REQUEST), *steps(40)])]
    settings = Settings(_env_file=None, llm_max_retries=0, llm_timeout_s=5)
    with (
        embedded(settings, bundled, GatewayOptions(token=None)) as gateway,
        serve(gateway.resources) as url,
        httpx.Client(base_url=url, timeout=30) as client,
    ):
        producers = gateway.resources.producers
        yield Console(client, producers.store, producers.redis, settings.channel_prefix)


def test_with_no_channel_the_offline_summary_is_written_and_marked(console: Console) -> None:
    done = console.compact()
    assert done["type"] == "compaction_done", done
    assert done["summarizer"] == "offline"
    [run] = console.client.get(f"/api/sessions/{SESSION}/runs").json()["runs"]
    assert (run["status"], run["model"]) == ("succeeded", "extractive-fallback")
    rows = console.client.get(f"/api/sessions/{SESSION}/history", params={"view": "display"})
    metadata = [r.get("metadata") or {} for r in rows.json()["messages"]]
    [row] = [m for m in metadata if m.get("event") == "done"]
    assert row["summarizer"] == "offline"


def test_a_failing_channel_fails_the_request_instead_of_an_offline_summary(
    console: Console, fake_llm: FakeLLM
) -> None:
    fake_llm.add_channel(console.store, "mine", api_key="sk-test-" + "0" * 32)
    fake_llm.script(Reply(status=500))
    before = console.store.load_history(SESSION)

    failed = console.compact()

    assert (failed["type"], failed["code"]) == ("compaction_failed", "llm_error"), failed
    assert len(fake_llm.requests) == 1
    assert console.store.load_history(SESSION) == before
    assert console.store.latest_summary(SESSION) is None

    # the channel answers again: its summary, marked as the model's
    fake_llm.script(Reply())
    done = console.compact()
    assert done["type"] == "compaction_done" and done["summarizer"] == "model", done
