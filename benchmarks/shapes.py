"""Synthetic conversations of the agent shapes the shared transcripts hold too little of
(issue 24, "Ahead of the newest anchor on work it has never seen"):

- ``research``: a research agent whose middle holds hundreds of distinct URLs, each search
  answered with result lists and each fetch with a long page;
- ``subagent``: a Claude Code subagent: one task prompt from the parent, then a long run of
  Read / Grep / Bash calls and their results, no further user turns;
- ``reasoning``: a reasoning model's SWE run, each step a long thinking text before a command,
  with tracebacks and errors named in its own prose;
- ``edits``: a Claude Code session with many file edits (Edit calls carrying old and new text,
  Read results with line numbers, test runs) and several user turns.

Every shape is deterministic (a seeded ``random.Random``: the same seed gives the same
messages) and well-formed: every tool call is answered by exactly one tool message, right after
the assistant message that made it. ``SHAPES`` maps a name to its generator; ``generate(name)``
returns the messages numbered from 1, as ``benchmarks.engine.load_transcript`` does. Used by
``benchmarks.versus`` (rows marked ``synthetic``) and by the survival benchmark.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import replace

from compaction import Message
from compaction.core.messages import ToolCall

VOCABULARY = (
    "the model context window agent tool result message summary request latency cache "
    "throughput memory budget token index query schema migration worker queue session "
    "database transaction commit rollback retry timeout error handler config deploy release "
    "benchmark baseline regression metric dataset sample region market growth revenue policy "
    "report analysis survey evidence source method finding estimate forecast quarter annual "
    "because however therefore which while after before during between across within about "
    "shows suggests reports measured increased decreased remained reached exceeded fell rose"
)
WORDS = tuple(VOCABULARY.split())
DOMAINS = (
    "arxiv.org/abs",
    "www.reuters.com/markets",
    "en.wikipedia.org/wiki",
    "github.com",
    "www.nature.com/articles",
    "docs.python.org/3/library",
    "www.bloomberg.com/news",
    "blog.example-research.net/posts",
    "www.oecd.org/en/publications",
    "data.worldbank.org",
)
ERRORS = (
    "ValueError: invalid literal for int() with base 10",
    "KeyError: 'session_id'",
    "AttributeError: 'NoneType' object has no attribute 'group'",
    "TypeError: unsupported operand type(s) for +: 'int' and 'str'",
    "AssertionError: expected 200, got 500",
    "ModuleNotFoundError: No module named 'yaml'",
)


def prose(rng: random.Random, words: int) -> str:
    """Sentences of ``words`` words from the fixed vocabulary, numbers now and then."""
    out: list[str] = []
    for i in range(words):
        word = rng.choice(WORDS)
        if rng.random() < 0.04:
            word = f"{rng.randint(2, 9_999):,}"
        out.append(word + ("." if i % 14 == 13 else ""))
    return " ".join(out).capitalize()


def url(rng: random.Random, serial: int) -> str:
    """A distinct URL: ``serial`` makes it unique, the rest makes it look real."""
    slug = "-".join(rng.choice(WORDS) for _ in range(3))
    return f"https://{rng.choice(DOMAINS)}/{slug}-{serial:05d}"


def call(rng: random.Random, name: str, arguments: dict[str, object]) -> ToolCall:
    return ToolCall(
        id=f"toolu_{rng.getrandbits(64):016x}", name=name, arguments=json.dumps(arguments)
    )


def step(thought: str, tool: ToolCall, result: str) -> list[Message]:
    """One assistant message with one tool call and its answer."""
    return [
        Message(role="assistant", content=thought, tool_calls=[tool]),
        Message(role="tool", content=result, tool_call_id=tool.id),
    ]


def research(seed: int = 24, searches: int = 20) -> list[Message]:
    """A research agent: each search lists eight results (URLs and snippets), then it fetches
    two of them (long pages that cite further URLs) and notes what it found."""
    rng = random.Random(seed)
    out = [
        Message(role="system", content="You are a deep-research agent. Cite every source."),
        Message(role="user", content="Research the state of " + prose(rng, 12).lower()),
    ]
    serial = 0
    for turn in range(searches):
        results = []
        for _ in range(8):
            serial += 1
            results.append((url(rng, serial), prose(rng, 30)))
        listing = "\n\n".join(f"[{i + 1}] {u}\n{s}" for i, (u, s) in enumerate(results))
        search = call(rng, "web_search", {"query": prose(rng, 6).lower()})
        out += step(f"Searching: {prose(rng, 20)}", search, listing)
        for link, _ in rng.sample(results, 2):
            cited = []
            for _ in range(3):
                serial += 1
                cited.append(url(rng, serial))
            page = "\n\n".join(prose(rng, 90) for _ in range(8))
            refs = "\n".join(f"- {c}" for c in cited)
            fetch = call(rng, "web_fetch", {"url": link})
            out += step("Reading the source.", fetch, f"# {link}\n\n{page}\n\nReferences:\n{refs}")
        out.append(
            Message(role="assistant", content=f"Noted from {results[0][0]}: {prose(rng, 40)}")
        )
        if turn % 10 == 9:
            out.append(Message(role="user", content=f"Also look at {prose(rng, 8).lower()}"))
    return numbered(out)


def file_listing(rng: random.Random, path: str, lines: int) -> str:
    """A Read result as Claude Code shows it: numbered lines with an arrow."""
    body = [
        f"{n:6d}\u2192    {rng.choice(WORDS)}_{n} = {rng.choice(WORDS)}({n})"
        for n in range(1, lines)
    ]
    return f"{path}\n" + "\n".join(body)


def subagent(seed: int = 24, steps: int = 120) -> list[Message]:
    """A Claude Code subagent: the parent's task prompt, then only tool calls and results."""
    rng = random.Random(seed)
    out = [
        Message(
            role="user",
            content="Find every caller of the session cache and report "
            "which ones bypass invalidation. " + prose(rng, 40),
        )
    ]
    for n in range(steps):
        path = f"src/{rng.choice(WORDS)}/{rng.choice(WORDS)}_{n:03d}.py"
        kind = n % 3
        if kind == 0:
            tool = call(rng, "Read", {"file_path": f"/repo/{path}"})
            result = file_listing(rng, f"/repo/{path}", rng.randint(60, 160))
        elif kind == 1:
            tool = call(rng, "Grep", {"pattern": f"cache_{rng.choice(WORDS)}", "path": "src"})
            result = "\n".join(
                f"src/{rng.choice(WORDS)}/mod_{rng.randint(0, 999):03d}.py:{rng.randint(1, 900)}:"
                f" {prose(rng, 8)}"
                for _ in range(rng.randint(5, 25))
            )
        else:
            tool = call(rng, "Bash", {"command": f"git log --oneline -- {path}"})
            result = "\n".join(f"{rng.getrandbits(28):07x} {prose(rng, 7)}" for _ in range(12))
        out += step(prose(rng, rng.randint(8, 30)), tool, result)
    out.append(Message(role="assistant", content="Report: " + prose(rng, 120)))
    return numbered(out)


def reasoning(seed: int = 24, steps: int = 60) -> list[Message]:
    """A reasoning model's SWE run: long thinking before each command; errors named in its
    own prose as well as in the tracebacks."""
    rng = random.Random(seed)
    out = [
        Message(role="system", content="You are a software engineer. Think, then act."),
        Message(role="user", content="<issue>\n" + prose(rng, 150) + "\n</issue>"),
    ]
    for n in range(steps):
        error = rng.choice(ERRORS)
        path = f"src/lib/{rng.choice(WORDS)}_{n % 17}.py"
        thought = "\n\n".join(prose(rng, 120) for _ in range(rng.randint(3, 7)))
        thinking = f"<think>\n{thought}\nThe run failed with {error} in {path}.\n</think>"
        tool = call(rng, "bash", {"command": f"python -m pytest tests/test_{n % 23}.py -x -q"})
        trace = (
            f'Traceback (most recent call last):\n  File "/testbed/{path}", line '
            f"{rng.randint(10, 900)}, in {rng.choice(WORDS)}\n{error}\n"
            if n % 2 == 0
            else f"{rng.randint(1, 80)} passed in {rng.random() * 9:.2f}s\n"
        )
        out += step(thinking + "\nRunning the tests.", tool, trace + prose(rng, 60))
    out.append(Message(role="assistant", content="Submitting the fix: " + prose(rng, 50)))
    return numbered(out)


def edits(seed: int = 24, files: int = 30) -> list[Message]:
    """A Claude Code session with many file edits: for each file Read, Edit (old and new text in
    the arguments), then a test run; a user turn every few files."""
    rng = random.Random(seed)
    out = [
        Message(role="system", content="You are Claude Code, an interactive CLI coding agent."),
        Message(role="user", content="Rename the cache layer's API and update every caller."),
    ]
    for n in range(files):
        path = f"/repo/src/{rng.choice(WORDS)}/{rng.choice(WORDS)}_{n:02d}.py"
        out += step(
            "Reading it first.",
            call(rng, "Read", {"file_path": path}),
            file_listing(rng, path, rng.randint(80, 200)),
        )
        for k in range(rng.randint(2, 4)):
            old = "\n".join(f"    {rng.choice(WORDS)}_{k} = cache_get({i})" for i in range(6))
            new = old.replace("cache_get", "cache.fetch")
            edit = call(rng, "Edit", {"file_path": path, "old_string": old, "new_string": new})
            out += step(prose(rng, 12), edit, f"The file {path} has been updated.\n{new}")
        test = call(rng, "Bash", {"command": f"pytest tests/test_{n:02d}.py -q"})
        out += step("Running its tests.", test, f"{rng.randint(3, 40)} passed\n" + prose(rng, 30))
        if n % 5 == 4:
            out.append(Message(role="user", content=prose(rng, rng.randint(10, 40))))
    out.append(Message(role="assistant", content="Done: " + prose(rng, 60)))
    return numbered(out)


def numbered(messages: list[Message]) -> list[Message]:
    return [replace(m, id=i) for i, m in enumerate(messages, start=1)]


SHAPES: dict[str, Callable[[], list[Message]]] = {
    "research": research,
    "subagent": subagent,
    "reasoning": reasoning,
    "edits": edits,
}


def generate(name: str) -> list[Message]:
    """The shape ``name``'s messages with its default seed and size."""
    return SHAPES[name]()
