"""A deterministic summarizer that needs no LLM (docs/architecture.md, "The algorithm").

It fills the seed's headings with lines taken from the turns themselves: the first user goal,
user constraints, commands run, files touched, errors, the last ask unless a reply answered it.
It serves the demo and the opt-in fallback for when the auxiliary model fails, and says in its
text that it is extractive. On an update it keeps the previous summary's lines under each
heading and adds the new ones.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

from compaction import ledger
from compaction.messages import Message
from compaction.prompts import HEADINGS, Language
from compaction.summary import SummaryRequest

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
#: Sections whose lines describe the latest state: an update replaces them.
_LATEST = frozenset({"doing", "next"})
_CONSTRAINT = re.compile(
    r"\b(?:must|should|never|always|don't|do not|prefer|avoid|only|make sure|require|please)\b"
    r"|必须|不要|别|请|需要|希望|只|务必",
    re.IGNORECASE,
)
_DECISION = re.compile(r"\b(?:decid|because|instead|chose|choose|going to|will use)", re.I)
# A dot ends a sentence only before white space ("setup.py" and "3.11" stay whole).
_SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")
_ITEM_CHARS = 240


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


def _sections(turns: Sequence[Message], head: Sequence[Message]) -> dict[str, list[str]]:
    users = [m for m in turns if m.role == "user" and not m.is_summary]
    first_ask = next((m for m in [*head, *users] if m.role == "user" and not m.is_summary), None)
    assistants = [m for m in turns if m.role == "assistant"]
    found = ledger.extract(turns)
    tools = Counter(call.name for m in assistants for call in m.tool_calls)
    last_words = next((m.content for m in reversed(assistants) if m.content.strip()), "")
    return {
        "goal": [_line(first_ask.content)] if first_ask else [],
        "constraints": _sentences(users, _CONSTRAINT)[:8],
        "done": [f"ran `{c}`" for c in found["commands"][-12:]],
        "doing": [_line(last_words)] if last_words else [],
        "blocked": found["errors"][-6:],
        "decisions": _sentences(assistants, _DECISION)[-6:],
        "files": found["paths"][-20:],
        "next": _open_ask(turns),
        "context": (found["ids"] + found["urls"] + found["values"])[-12:],
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


def _previous_sections(summary: str, language: Language) -> dict[str, list[str]]:
    by_heading = {h: key for key, h in HEADINGS[language].items()}
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for line in summary.splitlines():
        if line.strip() in by_heading:
            current = by_heading[line.strip()]
        elif current and line.startswith("- ") and line != _NONE[language]:
            sections.setdefault(current, []).append(line[2:])
    return sections


class OfflineSummarizer:
    """``summarize(request) -> str``; same input, same output."""

    def summarize(self, request: SummaryRequest) -> str:
        language = request.language
        headings = HEADINGS[language]
        fresh = _sections(request.messages, request.head)
        merged = _previous_sections(request.previous_summary or "", language)
        # A new ask ends the earlier next steps, even once answered.
        asked = any(m.role == "user" and not m.is_summary for m in request.messages)
        for key, items in fresh.items():
            if key == "goal" and merged.get("goal"):
                continue  # the first goal stays the goal
            if key in _LATEST and (items or (key == "next" and asked)):
                merged[key] = items
            else:
                merged[key] = list(dict.fromkeys([*merged.get(key, []), *items]))
        # Keep each section's newest lines when the budget binds (about 4 characters a token).
        per_section = max(2, request.budget_tokens * 4 // _ITEM_CHARS // len(headings))
        roles = Counter(m.role for m in request.messages)
        coverage = _COVERAGE[language].format(
            n=len(request.messages), u=roles["user"], a=roles["assistant"], t=roles["tool"]
        )
        lines = [_MARK[language], coverage, ""]
        for key, heading in headings.items():
            lines.append(heading)
            if key == "progress":
                continue
            items = merged.get(key, [])[-per_section:]
            lines.extend(f"- {item}" for item in items) if items else lines.append(_NONE[language])
            lines.append("")
        return "\n".join(lines).strip()
