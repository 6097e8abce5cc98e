"""Summary fidelity (issue "Step 11"): how many exact facts of the compacted span a model still
finds in the compacted context.

    python -m benchmarks.fidelity --channel NAME [--transcript PATH|NAME] [--probes N]
                                  [--offline] [--json]

The transcript is compacted as ``/compact`` would (``compact_staged``, reason ``manual``) with
the channel as the auxiliary summarizer (``--offline``: the extractive one). Probe questions
(``benchmarks/probes.py``) ask for exact facts of the span the summaries replaced; the channel's
model answers each once with the original context and once with the compacted one (the
messages as the model would get them, then the question). Reported per kind: the share of
answers holding the fact, with each context, and how often the two contexts agree (both found
or both missed). The channel is looked up by name in the store (``COMPACTION_DATABASE_URL``)
and called through the worker's own clients; its key is never printed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from benchmarks.engine import TRANSCRIPTS, window_for
from benchmarks.probes import KINDS, Probe, generate
from compaction import CompactionConfig, Message, Summarizer, compact_staged
from compaction.cli.sessions import read_transcript
from compaction.core.errors import CompactionError, NoChatModel
from compaction.core.offline import OfflineSummarizer
from compaction.service.settings import Settings
from compaction.store import Store, make_sessionmaker
from compaction.store.channels import with_key
from compaction.worker.llm import LlmSummarizer, SdkClient, build_client

DEFAULT_TRANSCRIPT = "openhands_ponyc-4588"
DEFAULT_PROBES = 12
#: an exact string is short: the answer needs no more
ANSWER_TOKENS = 256


@dataclass(frozen=True, slots=True)
class Compacted:
    """The compacted context and the ids of the original messages its summaries replaced."""

    messages: list[Message]
    span_ids: frozenset[int]

    @property
    def kept(self) -> list[Message]:
        return [m for m in self.messages if not m.is_summary and m.id is not None]


@dataclass(frozen=True, slots=True)
class Answer:
    probe: Probe
    original: str
    compacted: str

    @property
    def found_original(self) -> bool:
        return found(self.probe.fact, self.original)

    @property
    def found_compacted(self) -> bool:
        return found(self.probe.fact, self.compacted)


def found(fact: str, answer: str) -> bool:
    """Whether the answer holds the fact (white space aside)."""
    return " ".join(fact.split()) in " ".join(answer.split())


def load(ref: str) -> list[Message]:
    """A transcript by path, or by the name of a shared one (``tests/data/transcripts``); each
    message gets an id, as stored messages have."""
    path = Path(ref)
    if not path.is_file():
        path = TRANSCRIPTS / f"{ref.removesuffix('.json')}.json"
    messages = read_transcript(path)
    return [replace(m, id=i) for i, m in enumerate(messages, start=1)]


def compact(messages: Sequence[Message], summarizer: Summarizer) -> Compacted:
    """``/compact`` on the transcript with the transcript tests' window, both stages."""
    config = CompactionConfig(context_window=window_for(list(messages)), protect_first_n=1)
    staged = compact_staged(messages, config, summarizer, reason="manual")
    stages = [s for s in (staged.history, staged.loop) if s is not None]
    ids = frozenset(i for s in stages for i in s.compressed_ids)
    return Compacted(staged.messages, ids)


def ask(client: SdkClient, context: Sequence[Message], probe: Probe) -> str:
    question = Message(role="user", content=probe.prompt)
    return client.converse([*context, question], ANSWER_TOKENS).text


def measure(
    client: SdkClient, original: Sequence[Message], compacted: Compacted, probes: Sequence[Probe]
) -> list[Answer]:
    return [
        Answer(probe, ask(client, original, probe), ask(client, compacted.messages, probe))
        for probe in probes
    ]


def report(answers: Sequence[Answer]) -> dict[str, dict[str, float | int]]:
    """Per kind with probes, then ``all``: probes, and the shares found and agreeing."""
    groups = {kind: [a for a in answers if a.probe.kind == kind] for kind in KINDS}
    groups = {kind: group for kind, group in groups.items() if group}
    groups["all"] = list(answers)
    rows: dict[str, dict[str, float | int]] = {}
    for kind, group in groups.items():
        n = len(group) or 1
        rows[kind] = {
            "probes": len(group),
            "original": sum(a.found_original for a in group) / n,
            "compacted": sum(a.found_compacted for a in group) / n,
            "agreement": sum(a.found_original == a.found_compacted for a in group) / n,
        }
    return rows


def table(rows: dict[str, dict[str, float | int]]) -> str:
    lines = [f"{'kind':<10}{'probes':>8}{'original':>11}{'compacted':>11}{'agreement':>11}"]
    for kind, row in rows.items():
        shares = (f"{row[k]:>11.0%}" for k in ("original", "compacted", "agreement"))
        lines.append(f"{kind:<10}{row['probes']:>8}{''.join(shares)}")
    return "\n".join(lines)


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fidelity", description=__doc__)
    parser.add_argument("--channel", required=True, help="the model channel's name or id")
    parser.add_argument("--transcript", default=DEFAULT_TRANSCRIPT, help="a path or a name")
    parser.add_argument("--probes", type=int, default=DEFAULT_PROBES)
    parser.add_argument("--offline", action="store_true", help="the extractive summarizer")
    parser.add_argument("--json", action="store_true")
    return parser


def open_client(name: str, settings: Settings) -> SdkClient:
    """The channel's client; a missing channel, or a key its variable does not hold, raises."""
    channel = Store(make_sessionmaker(settings.database_url)).get_channel(name)
    return build_client(with_key(channel, NoChatModel), settings)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    command = f"$ python -m benchmarks.fidelity {' '.join(argv or sys.argv[1:])}".rstrip()
    try:
        client = open_client(args.channel, Settings())
        messages = load(args.transcript)
    except (CompactionError, OSError) as err:
        print(f"fidelity: error: {err}", file=sys.stderr)
        return 2
    summarizer: Summarizer = OfflineSummarizer() if args.offline else LlmSummarizer(client)
    try:
        compacted = compact(messages, summarizer)
        probes = generate(messages, compacted.span_ids, compacted.kept, args.probes)
        rows = report(measure(client, messages, compacted, probes))
    except CompactionError as err:  # the model failed (its key scrubbed), or nothing to compact
        print(f"fidelity: error [{err.code}]: {err}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"command": command, "model": client.model, "kinds": rows}, indent=2))
    else:
        print(command)
        print(f"model {client.model}; {len(compacted.span_ids)} messages compacted\n")
        print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
