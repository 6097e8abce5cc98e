"""``compaction demo``: the whole pipeline on a bundled real transcript.

With nothing configured it needs no service and no key: a SQLite file in a temporary folder,
an in-process Redis (fakeredis) with an in-process RQ worker, and the offline (extractive)
summarizer. ``COMPACTION_DATABASE_URL``, ``COMPACTION_REDIS_URL`` or a configured auxiliary
channel make it use the real ones instead.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

import fakeredis
import redis
from rq import SimpleWorker
from rq.serializers import JSONSerializer

from compaction.cli.common import prepare_database
from compaction.cli.sessions import read_transcript
from compaction.core import estimate_messages_tokens
from compaction.core.contract import AnyEvent, CompactionDone, CompactionStart
from compaction.core.errors import NoAuxiliaryModel
from compaction.producers.context import Producers
from compaction.service.events import EventPublisher, newest_id, read_batch
from compaction.service.keys import events_stream
from compaction.service.queue import compaction_queue
from compaction.service.redis import redis_client
from compaction.service.settings import Settings
from compaction.store import Store, make_sessionmaker
from compaction.worker.runtime import Runtime, install

BUNDLED = {"en": "msa_deepseek-chat_pydicom-1139.json", "zh": "deerflow_5aa47db1_zh.json"}


def register(commands: Any) -> None:
    parser = commands.add_parser("demo", help="the whole pipeline on a bundled real transcript")
    parser.add_argument("--transcript", type=Path, help="a JSON transcript (OpenAI format)")
    parser.add_argument("--language", choices=("zh", "en"), help="summary language")
    parser.add_argument(
        "--context-window",
        type=int,
        default=16_000,
        help="the model's window in tokens (default 16000: small enough that the bundled "
        "transcript needs compacting)",
    )
    parser.set_defaults(run=run)


def _services(settings: Settings, out: TextIO | None) -> tuple[Settings, redis.Redis]:
    overrides: dict[str, Any] = {"context_window": settings.context_window}
    if "COMPACTION_DATABASE_URL" not in os.environ:
        folder = Path(tempfile.mkdtemp(prefix="compaction-demo-"))
        overrides["database_url"] = f"sqlite:///{folder / 'demo.db'}"
    settings = settings.model_copy(update=overrides)
    prepare_database(settings.database_url)
    client: redis.Redis
    if "COMPACTION_REDIS_URL" in os.environ:
        client, where = redis_client(settings.redis_url), settings.redis_url
    else:
        client, where = fakeredis.FakeRedis(), "in-process (fakeredis)"
    print(f"  database: {settings.database_url}", file=out)
    print(f"  redis:    {where}", file=out)
    return settings, client


def _summarizer_line(store: Store, settings: Settings) -> tuple[str, bool]:
    try:
        channel = store.resolve_auxiliary(key_env_pattern=settings.channel_key_env_pattern)
    except NoAuxiliaryModel:
        return "offline extractive summarizer (no auxiliary channel configured)", True
    return f"auxiliary channel {channel.name!r} ({channel.provider} {channel.model})", False


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    print("[1/5] services", file=out)
    settings, client = _services(Settings(context_window=args.context_window), out)
    store = Store(make_sessionmaker(settings.database_url))
    label, offline = _summarizer_line(store, settings)
    settings = settings.model_copy(
        update={
            "fallback_summary": offline or settings.fallback_summary,
            "summary_language": args.language or settings.summary_language,
        }
    )
    print(f"  summary:  {label}", file=out)
    session_id, count_before = _import(args, store, out)
    started = time.perf_counter()
    events = _compact(settings, store, client, session_id, out)
    seconds = time.perf_counter() - started
    final = events[-2] if len(events) > 1 and events[-1].type == "token_update" else events[-1]
    if not isinstance(final, CompactionDone):
        print(f"compaction: the demo's compaction ended {final.type}", file=sys.stderr)
        return 1
    dones = [e for e in events if isinstance(e, CompactionDone)]
    _report(store, settings, session_id, count_before, dones, seconds, out)
    return 0


def _import(args: argparse.Namespace, store: Store, out: TextIO | None) -> tuple[str, int]:
    """The transcript as a new session; its id and how many messages it holds."""
    if args.transcript:
        name, messages = args.transcript.name, read_transcript(args.transcript)
    else:
        name = BUNDLED[args.language or "en"]
        source = resources.files("compaction.cli.demo_data").joinpath(name)
        with resources.as_file(source) as path:
            messages = read_transcript(path)
    session_id = store.create_session()
    store.append_messages(session_id, messages)
    before = store.load_history(session_id)
    tokens_before = estimate_messages_tokens(s.message for s in before)
    print(
        f"[2/5] imported {name}: {len(before)} messages, ~{tokens_before:,} tokens "
        f"(session {session_id})",
        file=out,
    )
    return session_id, len(before)


def _compact(
    settings: Settings, store: Store, client: redis.Redis, session_id: str, out: TextIO | None
) -> list[AnyEvent]:
    """``/compact`` through the queue and an in-process worker; the events it published."""
    ctx = Producers(settings=settings, store=store, redis=client)
    stream = events_stream(settings.channel_prefix)
    since = newest_id(client.xrevrange(stream, count=1))
    queued = ctx.request_manual(session_id)
    print(f"[3/5] /compact queued (request {queued.request_id})", file=out)
    publisher = EventPublisher(client, prefix=settings.channel_prefix)
    install(Runtime(settings=settings, store=store, redis=client, publisher=publisher))
    print("[4/5] worker running the job", file=out)
    queue = compaction_queue(client, settings.queue_name)
    SimpleWorker([queue], connection=client, serializer=JSONSerializer).work(
        burst=True, logging_level="WARNING"
    )
    events = _events(client, stream, since)
    for event in events:
        print(f"  event {event.type}{_event_detail(event)}", file=out)
    return events


def _report(
    store: Store,
    settings: Settings,
    session_id: str,
    count_before: int,
    dones: list[CompactionDone],
    seconds: float,
    out: TextIO | None,
) -> None:
    after = store.load_history(session_id)
    run_record = store.runs(session_id)[-1]
    print("[5/5] done\n", file=out)
    _table(count_before, len(after), dones, seconds, run_record.durations or {}, out)
    summary = store.latest_summary(session_id)
    if summary is not None:
        print("\nsummary message:\n", file=out)
        print(summary.message.content, file=out)
    print(
        "\nevery original message is kept; to see them:\n"
        f"  COMPACTION_DATABASE_URL={settings.database_url} "
        f"compaction history {session_id} --view full",
        file=out,
    )


def _events(client: redis.Redis, stream: str, since: str) -> list[AnyEvent]:
    entries: Any = client.xrange(stream, min=f"({since}")
    return read_batch([(stream, entries)], None, since)[1]


def _event_detail(event: AnyEvent) -> str:
    stage = f" ({event.stage})" if isinstance(event, CompactionStart | CompactionDone) else ""
    if isinstance(event, CompactionDone):
        follows = f"; the {event.next_stage} stage follows" if event.next_stage else ""
        return (
            f"{stage}: {event.removed_count} messages summarized, {event.tokens_before:,} → "
            f"{event.tokens_after:,} tokens{follows}"
        )
    if stage:
        return stage
    code = getattr(event, "code", None)
    return f" [{code}]" if code else ""


def _table(
    count_before: int,
    count_after: int,
    dones: list[CompactionDone],
    seconds: float,
    phases: dict[str, float],
    out: TextIO | None,
) -> None:
    """Figures over the request's stages: from the first's before to the last's after."""
    before, after = dones[0].tokens_before, dones[-1].tokens_after
    ratio = after / before if before else 1.0
    pruned = sum(d.pruned_count for d in dones)
    removed = sum(d.removed_count for d in dones)
    print(f"{'':28}{'before':>10}{'after':>10}", file=out)
    print(f"{'messages (compacted view)':28}{count_before:>10,}{count_after:>10,}", file=out)
    print(
        f"{'tokens (estimated)':28}{before:>10,}{after:>10,}  ratio {ratio:.2f} (-{1 - ratio:.0%})",
        file=out,
    )
    print(f"{'tool outputs pruned':28}{'':>10}{pruned:>10}", file=out)
    print(f"{'messages summarized':28}{'':>10}{removed:>10}", file=out)
    parts = ", ".join(f"{name} {value * 1000:.1f} ms" for name, value in phases.items())
    print(f"\njob time {seconds * 1000:.0f} ms; phases: {parts}", file=out)
