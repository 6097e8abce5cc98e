"""The embedded gateway (docs/architecture.md, "The gateway"): with neither
``COMPACTION_DATABASE_URL`` nor ``COMPACTION_REDIS_URL`` configured, the whole product runs in
the gateway's process on the defaults ``compaction demo`` uses: a migrated SQLite file in a
temporary folder, an in-process Redis (fakeredis), an in-process worker, the offline
summarizer and an offline chat model (until channels are added), and the bundled transcripts
already imported so the console has something to show.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import fakeredis.aioredis

from compaction.core.messages import Message
from compaction.embedded import running
from compaction.gateway.chat_model import OfflineChatModel
from compaction.gateway.resources import GatewayOptions, Resources
from compaction.service.settings import Settings
from compaction.store import Store

#: the bundled sessions' agent: a window small enough that a bundled transcript (about 28,000
#: tokens) is past the threshold, so the first message compacts it (and /compact has work)
AGENT_ID = "demo"
CONTEXT_WINDOW = 32_000


@dataclass(frozen=True)
class Bundled:
    """A transcript to import as session ``session_id``."""

    session_id: str
    messages: Sequence[Message]


def is_embedded(settings: Settings) -> bool:
    """No database and no Redis configured (environment or ``.env``): nothing outside this
    process could share the gateway's data, so it runs everything itself."""
    return {"database_url", "redis_url"}.isdisjoint(settings.model_fields_set)


@dataclass
class Embedded:
    resources: Resources
    #: the temporary folder of the SQLite file, removed when the gateway stops
    folder: Path
    sessions: list[str]


def embedded_settings(settings: Settings, folder: Path) -> Settings:
    """The demo's defaults over ``settings``: the SQLite file in ``folder``."""
    return settings.model_copy(update={"database_url": f"sqlite:///{folder / 'gateway.db'}"})


def offline_without_channel(settings: Settings) -> bool:
    """The offline summarizer answers while no auxiliary channel is configured, and only then
    (a channel the user added that fails fails the request), unless the user chose
    ``COMPACTION_FALLBACK_SUMMARY`` themselves (docs/architecture.md, "The gateway")."""
    return "fallback_summary" not in settings.model_fields_set


def import_bundled(store: Store, bundled: Sequence[Bundled]) -> list[str]:
    """The bundled transcripts as sessions of the ``demo`` agent; their ids."""
    store.set_agent(AGENT_ID, context_window=CONTEXT_WINDOW)
    return [
        store.create_session(item.session_id, agent_id=AGENT_ID, messages=item.messages)
        for item in bundled
    ]


@contextmanager
def embedded(
    settings: Settings, bundled: Sequence[Bundled], options: GatewayOptions
) -> Iterator[Embedded]:
    """The gateway's resources on the embedded services, its worker running; all of it
    stopped and the temporary folder removed when the block ends."""
    folder = Path(tempfile.mkdtemp(prefix="compaction-gateway-"))
    try:
        offline = offline_without_channel(settings)
        with running(embedded_settings(settings, folder), offline_without_channel=offline) as stack:
            yield Embedded(
                Resources(
                    settings=stack.settings,
                    producers=stack.producers,
                    events_redis=fakeredis.aioredis.FakeRedis(server=stack.server),
                    options=options,
                    chat_fallback=OfflineChatModel(stack.producers.estimator),
                ),
                folder,
                import_bundled(stack.store, bundled),
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
