"""A deterministic summarizer that needs no LLM (docs/architecture.md, "The algorithm").

It fills the seed's headings with lines taken from the turns themselves: the first user goal,
user constraints, commands run, files touched, errors, the last ask unless a reply answered it.
Asked for the loop's execution summary (``compaction/core/prompts_loop.py``), it fills the loop's
headings instead: the tool calls in order, commands run, errors, paths and values, the agent's
last words. It serves the demo and the opt-in fallback for when the auxiliary model fails, and
says in its text that it is extractive. On an update it keeps the previous summary's lines under
each heading and adds the new ones.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from compaction.core import ledger
from compaction.core.identifiers import commands
from compaction.core.messages import Message, ToolCall, own_words
from compaction.core.prompts import HEADINGS, Language
from compaction.core.prompts_loop import LOOP_HEADINGS, LOOP_MARKER
from compaction.core.summary import SummaryRequest

_MARK: dict[Language, str] = {
    "en": "(Extractive summary built without an LLM: the lines below are quoted from the turns.)",
    "zh": "（抽取式摘要，未使用 LLM：以下内容摘自原对话。）",
}
_NONE: dict[Language, str] = {"en": "- (none recorded)", "zh": "- （无记录）"}
_COVERAGE: dict[Language, str] = {
    "en": "This summary covers {n} messages ({u} from the user, {a} from the assistant, "
    "{t} tool results).",
    "zh": "本摘要覆盖 {n} 条消息（用户 {u} 条、助手 {a} 条、工具结果 {t} 条），"
    "由原文逐条抽取而成。",
}
_CONSTRAINT = re.compile(
    r"\b(?:must|should|never|always|don't|do not|prefer|avoid|only|make sure|require|please)\b"
    r"|必须|不要|别|请|需要|希望|只|务必",
    re.IGNORECASE,
)
_DECISION = re.compile(r"\b(?:decid|because|instead|chose|choose|going to|will use)", re.I)
# A user's rule, preference or stated value (docs/architecture.md, "The offline summarizer's
# user lines"): a labelled line ("Rule: …", "NOTE: …"), a rule word, a wish, or an exact value
# (a digit, a URL, a path or a dotted/dashed name). The user's words are the session's ground
# truth: every such line is kept, none is paraphrased.
_LABEL = re.compile(r"\s*[A-Z][A-Za-z ]{1,30}:\s")
_RULE = re.compile(
    rf"^{_LABEL.pattern}"
    r"|\b(?:wants?|prefers?|rules?|constraints?|requires?|forbid|not allowed|no longer)\b"
    r"|\d|https?://|\w[/.]\w|[A-Z]{2,}-\w",
)
# A choice the user makes mid-conversation ("go with C", "let's use X", "switch to Y"): the
# newest one is the goal from then on.
_USER_DECISION = re.compile(
    r"\b(?:go with|going with|let'?s (?:use|go|do)|switch(?:ing)? to|use .{1,40} instead"
    r"|decided?|decision|chose|choose|pick|settle on|stick with|option [a-z0-9]\b"
    r"|let'?s|instead(?! of)|scratch that|never ?mind|ignore (?:the|my|that) (?:earlier|previous))"
    r"|决定|改用|就用|选择",
    re.IGNORECASE,
)
_VALUE = re.compile(r"\$?\d[\d.,:/-]*")
# A dot ends a sentence only before white space ("setup.py" and "3.11" stay whole).
_SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")
_ITEM_CHARS = 240
#: The loop summary's newest calls, the most listed from one request.
_LOOP_CALLS = 16


def _line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _ITEM_CHARS else text[: _ITEM_CHARS - 1] + "…"


def _sentences(messages: Iterable[Message], pattern: re.Pattern[str]) -> list[str]:
    found: list[str] = []
    for message in messages:
        for sentence in _SENTENCE.split(message.content):
            if sentence.strip() and pattern.search(sentence):
                found.append(_line(sentence))
    return found


def _is_rule(sentence: str) -> bool:
    return any(p.search(sentence) for p in (_CONSTRAINT, _RULE, _USER_DECISION))


def _rule_lines(text: str) -> list[str]:
    """A short message under a label ("Note: …", "HARD CONSTRAINT: …") is kept whole: all its
    sentences are what the user put on record; otherwise its rule sentences."""
    if _LABEL.match(text) and len(" ".join(text.split())) <= _ITEM_CHARS:
        return [_line(text)]
    return [_line(s) for s in _SENTENCE.split(text) if s.strip() and _is_rule(s)]


def _user_rules(said: Iterable[str]) -> list[str]:
    """Every rule, preference, decision or value line of the user, oldest first; of lines
    that differ only in their values (a cap, a date restated), the newest alone."""
    lines = [line for text in said for line in _rule_lines(text)]
    newest = {_VALUE.sub("#", line).casefold(): line for line in lines}
    kept = (line for line in lines if newest[_VALUE.sub("#", line).casefold()] == line)
    return list(dict.fromkeys(kept))


def _newest_of(line: str, rules: Sequence[str]) -> str:
    """``line``, or the newest rule line that differs from it only in its values (the goal
    restated with a new date or cap is that newer line)."""
    key = _VALUE.sub("#", line).casefold()
    return next((r for r in reversed(rules) if _VALUE.sub("#", r).casefold() == key), line)


def _unquoted(items: Sequence[str], said: Iterable[str]) -> list[str]:
    """The items no rule line of the user holds: a kept line quotes them already, and one
    superseded (a cap restated) must not come back as a bare value."""
    quoted = "\n".join(line for text in said for line in _rule_lines(text))
    return [item for item in items if item not in quoted]


def _latest_decision(said: Sequence[str]) -> list[str]:
    """The newest user line that makes a choice: the goal follows it (a rejected plan stated
    first is not the goal)."""
    found = [_line(s) for t in said for s in _SENTENCE.split(t) if _USER_DECISION.search(s)]
    return found[-1:]


def _last_words(assistants: Sequence[Message]) -> list[str]:
    """The latest assistant text: what the agent was doing, or about to do."""
    text = next((m.content for m in reversed(assistants) if m.content.strip()), "")
    return [_line(text)] if text else []


def _ran(found: Mapping[str, list[str]]) -> list[str]:
    return [f"ran `{c}`" for c in found["commands"][-12:]]


def _sections(turns: Sequence[Message], head: Sequence[Message]) -> dict[str, list[str]]:
    users = [m for m in turns if m.role == "user" and not m.is_summary]
    first_ask = next((m for m in [*head, *users] if own_words(m)), None)
    assistants = [m for m in turns if m.role == "assistant"]
    found = ledger.extract(turns)
    tools = Counter(call.name for m in assistants for call in m.tool_calls)
    # What a person typed: not the texts a client injects as the user (compaction/core/messages.py).
    said = [text for m in users if (text := own_words(m))]
    rules = _user_rules(said)
    goal = [_newest_of(_line(own_words(first_ask)), rules)] if first_ask else []
    return {
        "goal": _latest_decision(said) or goal,
        # not a heading: the span's own decision, which replaces an earlier goal on an update
        "decided": _latest_decision(said),
        "constraints": rules,
        "done": _ran(found),
        "doing": _last_words(assistants),
        "blocked": found["errors"][-6:],
        "decisions": _sentences(assistants, _DECISION)[-6:],
        "files": found["paths"][-20:],
        "next": _open_ask(turns),
        "context": _unquoted(found["ids"] + found["urls"] + found["values"], said)[-12:],
        "tools": [f"{name} ×{count}" for name, count in tools.most_common(8)],
    }


def _open_ask(turns: Sequence[Message]) -> list[str]:
    """The last user ask, unless a later assistant reply in text (no tool call: the agent's
    turn ended there) answered it; an answered ask is no next step."""
    for message in reversed(turns):
        if message.role == "assistant" and not message.tool_calls and message.content.strip():
            return []
        if message.role == "user" and not message.is_summary:
            return [_line(message.content)]
    return []


def _loop_sections(turns: Sequence[Message], _head: Sequence[Message]) -> dict[str, list[str]]:
    """The loop's execution summary (docs/architecture.md, "The algorithm"): the steps' calls,
    commands, errors and values; the request above them stays verbatim, so no goal."""
    assistants = [m for m in turns if m.role == "assistant"]
    found = ledger.extract(turns)
    # The newest calls only: each is matched against the ledger's findings.
    calls = [call for m in assistants for call in m.tool_calls][-_LOOP_CALLS:]
    keys = [*found["paths"], *found["urls"], *found["ids"]]
    return {
        "calls": [_call(call, keys) for call in calls],
        "done": _ran(found),
        "failed": found["errors"][-6:],
        "state": found["paths"][-12:] + (found["ids"] + found["urls"] + found["values"])[-8:],
        "next": _last_words(assistants),
    }


def _call(call: ToolCall, keys: Sequence[str]) -> str:
    """A call's name and its key argument: the command it ran, else the first of ``keys`` (the
    ledger's paths, URLs and ids) in its arguments, the longest of those starting there (a
    file, not the folder that begins its path)."""
    key = next(iter(commands([call])), None)
    if key is None:
        at = ((call.arguments.find(k), -len(k), k) for k in keys)
        key = min((hit for hit in at if hit[0] != -1), default=(0, 0, ""))[2]
    return _line(f"{call.name} `{key}`" if key else call.name)


def _previous_sections(
    summary: str, headings: Mapping[str, str], language: Language
) -> dict[str, list[str]]:
    by_heading = {h: key for key, h in headings.items()}
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for line in summary.splitlines():
        if line.strip() in by_heading:
            current = by_heading[line.strip()]
        elif current and line.startswith("- ") and line != _NONE[language]:
            sections.setdefault(current, []).append(line[2:])
    return sections


@dataclass(frozen=True, slots=True)
class _Kind:
    """One kind of summary: its headings, how its sections are filled from the turns, and the
    sections that describe the latest state (an update replaces them)."""

    headings: Mapping[Language, dict[str, str]]
    sections: Callable[[Sequence[Message], Sequence[Message]], dict[str, list[str]]]
    latest: frozenset[str]


_HISTORY = _Kind(HEADINGS, _sections, frozenset({"doing", "next"}))
_LOOP = _Kind(LOOP_HEADINGS, _loop_sections, frozenset({"next"}))


def _fit(key: str, items: list[str], per_section: int, budget_tokens: int) -> list[str]:
    """A section's newest lines when the budget binds; the user's rule lines (all of them, the
    oldest too) may take three quarters of the budget (about 4 characters a token)."""
    if key != "constraints":
        return items[-per_section:]
    room, kept = budget_tokens * 3, list[str]()
    for item in reversed(items):
        room -= len(item) + 3
        if room < 0:
            break
        kept.append(item)
    return kept[::-1]


def _tight(
    headings: Mapping[str, str], sections: Mapping[str, list[str]], language: Language
) -> list[str]:
    """The summary when its usual form overruns the budget: no coverage line, and an empty
    section left out rather than marked, so that the budget goes to lines taken from the
    turns (docs/architecture.md, "The offline summarizer's user lines")."""
    lines = [_MARK[language]]
    for key, heading in headings.items():
        if sections.get(key):
            lines.extend([heading, *(f"- {item}" for item in sections[key])])
    return lines


class OfflineSummarizer:
    """``summarize(request) -> str``; same input, same output."""

    def summarize(self, request: SummaryRequest) -> str:
        language = request.language
        kind = _LOOP if request.prompts.marker == LOOP_MARKER else _HISTORY
        headings = kind.headings[language]
        fresh = kind.sections(request.messages, request.head)
        merged = _previous_sections(request.previous_summary or "", headings, language)
        # A new ask ends the earlier next steps, even once answered.
        asked = any(m.role == "user" and not m.is_summary for m in request.messages)
        for key, items in fresh.items():
            if key == "goal" and merged.get("goal"):
                # The first goal stays the goal, until the user decides otherwise in the span
                # (a decision in the protected head is no news).
                merged["goal"] = fresh["decided"] or merged["goal"]
                continue
            if key in kind.latest and (items or (key == "next" and asked)):
                merged[key] = items
            else:
                merged[key] = list(dict.fromkeys([*merged.get(key, []), *items]))
        # Keep each section's newest lines when the budget binds (about 4 characters a token).
        per_section = max(2, request.budget_tokens * 4 // _ITEM_CHARS // len(headings))
        roles = Counter(m.role for m in request.messages)
        coverage = _COVERAGE[language].format(
            n=len(request.messages), u=roles["user"], a=roles["assistant"], t=roles["tool"]
        )
        sections = {
            key: _fit(key, merged.get(key, []), per_section, request.budget_tokens)
            for key in headings
        }
        lines = [_MARK[language], coverage, ""]
        for key, heading in headings.items():
            lines.append(heading)
            if key == "progress":
                continue
            items = sections[key]
            lines.extend(f"- {item}" for item in items) if items else lines.append(_NONE[language])
            lines.append("")
        if len("\n".join(lines)) > request.budget_tokens * 4:
            lines = _tight(headings, sections, language)
        return "\n".join(lines).strip()
