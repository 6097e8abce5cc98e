"""The message model shared by every layer (docs/architecture.md, "Layers"), and its dict form.

Plain slotted dataclasses rather than pydantic models: the core builds hundreds of thousands of
them per second in the benchmarks, and validation happens once, at construction. The dict form
(the transcripts', OpenAI chat's) has one parser, ``Message.from_dict``; the content-part
helpers below serve the Anthropic parser in ``compaction/core/formats.py`` too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from compaction.core.errors import InvalidRequest
from compaction.core.storable import check_storable, too_deep

Role = Literal["system", "user", "assistant", "tool"]
ROLES: frozenset[str] = frozenset({"system", "user", "assistant", "tool"})
#: Role names of the dict form: "developer" is the o-series name for the system prompt.
_DICT_ROLES: dict[str, Role] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
}
# Responses-API part names are accepted too: some SDKs mix them into chat requests.
_TEXT_PARTS = frozenset({"text", "input_text", "output_text"})
_IMAGE_PARTS = frozenset({"image_url", "input_image", "image"})

#: Every summary message starts with this marker (docs/architecture.md, "The algorithm", phase 3).
#: It is what the main model reads, never how a summary is recognised: anyone can type it.
SUMMARY_MARKER = "[CONTEXT COMPACTION]"


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: str = ""

    def __post_init__(self) -> None:
        for name in ("id", "name", "arguments"):
            if not isinstance(getattr(self, name), str):
                raise InvalidRequest(f"tool call {name} must be a string")


@dataclass(frozen=True, slots=True)
class Message:
    """One conversation message.

    ``original_content`` is set when ``content`` is a placeholder standing for something longer
    (a pruned tool result): the summarizer reads the original, the model sees the placeholder.
    ``is_summary`` marks an earlier compaction's summary: set by ``compact()`` on the summary it
    writes and by the store on the rows it wrote so, never inferred from the text (a user may
    type the marker; docs/architecture.md, "The algorithm").
    ``pinned`` marks a message the user pinned: no stage summarizes or prunes it, nor the tool
    call or results it forms a step with (``compaction.core.pins``; docs/architecture.md,
    "Pins"). Set by the store from the row, never by a transcript.
    """

    role: Role
    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None
    id: int | None = None
    original_content: str | None = None
    is_summary: bool = False
    pinned: bool = False

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise InvalidRequest(f"unknown role {self.role!r}; expected one of {sorted(ROLES)}")
        if not isinstance(self.content, str):
            raise InvalidRequest(
                f"message content must be a string, got {type(self.content).__name__}"
            )
        if self.role == "tool" and not self.tool_call_id:
            raise InvalidRequest("a tool message needs a tool_call_id")
        if self.tool_calls and self.role != "assistant":
            raise InvalidRequest(f"only assistant messages carry tool calls, not {self.role}")
        if self.is_summary and self.role != "user":
            raise InvalidRequest(f"a summary is a user message, not {self.role}")

    @classmethod
    def from_trusted(
        cls,
        role: Role,
        content: str,
        tool_calls: list[ToolCall],
        tool_call_id: str | None,
        id: int | None,
        original_content: str | None = None,
        is_summary: bool = False,
        pinned: bool = False,
    ) -> Message:
        """Build without the checks, for rows the database already constrains (role, text
        content): twice as fast, which counts when loading 10,000 messages."""
        message = object.__new__(cls)
        # The slots' own setters (frozen: ``__init__`` goes through object.__setattr__, which
        # looks each name up first).
        (
            set_role,
            set_content,
            set_calls,
            set_call_id,
            set_id,
            set_original,
            set_summary,
            set_pinned,
        ) = _MESSAGE_SETTERS
        set_role(message, role)
        set_content(message, content)
        set_calls(message, tool_calls)
        set_call_id(message, tool_call_id)
        set_id(message, id)
        set_original(message, original_content)
        set_summary(message, is_summary)
        set_pinned(message, pinned)
        return message

    @property
    def source_text(self) -> str:
        """What the message really said: the original of a placeholder, else the content."""
        return self.content if self.original_content is None else self.original_content

    def with_content(self, content: str, *, original: str | None = None) -> Message:
        if not isinstance(content, str):
            raise InvalidRequest(f"message content must be a string, got {type(content).__name__}")
        # Only the content changes, and this message passed the checks already.
        return Message.from_trusted(
            self.role,
            content,
            self.tool_calls,
            self.tool_call_id,
            self.id,
            original,
            self.is_summary,
            self.pinned,
        )

    def to_dict(self) -> dict[str, Any]:
        """The project's transcript format (``shared/transcripts/README.md``)."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in self.tool_calls
            ]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.id is not None:
            out["id"] = self.id
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Message:
        """A message from its dict form: the project's transcripts and OpenAI chat messages
        alike (tool calls flat or under ``function``, content a string, null or a list of
        parts). The one validating path for dicts (``formats.from_openai``, the store's
        appends): bad input, and text no database stores (``check_storable``), raises
        ``InvalidRequest``. Unknown keys are ignored, and so is an ``id`` that is not an
        integer (ids are the store's row ids)."""
        if not isinstance(data, Mapping):
            raise InvalidRequest(f"a message must be an object, got {type(data).__name__}")
        role = data.get("role")
        if not isinstance(role, str) or role not in _DICT_ROLES:
            raise InvalidRequest(f"unknown role {role!r}; expected one of {sorted(_DICT_ROLES)}")
        calls = data.get("tool_calls")
        if calls is None:
            calls = []
        elif not isinstance(calls, list):
            raise InvalidRequest("tool_calls must be a list")
        raw_id = data.get("id")
        message = cls(
            role=_DICT_ROLES[role],
            content=as_text(data.get("content"), "content", list, parts_text, "a list of parts"),
            tool_calls=[_tool_call_from_dict(c) for c in calls],
            tool_call_id=optional_str(data, "tool_call_id"),
            # bool is an int subclass; a True id is certainly not ours
            id=raw_id if isinstance(raw_id, int) and not isinstance(raw_id, bool) else None,
        )
        return check_storable(message)


_MESSAGE_SETTERS = tuple(getattr(Message, f.name).__set__ for f in fields(Message))
_TOOL_CALL_SETTERS = tuple(getattr(ToolCall, f.name).__set__ for f in fields(ToolCall))


def trusted_tool_call(id: str, name: str, arguments: str) -> ToolCall:
    """A ``ToolCall`` without the checks, for database rows (see ``Message.from_trusted``)."""
    call = object.__new__(ToolCall)
    set_id, set_name, set_arguments = _TOOL_CALL_SETTERS
    set_id(call, id)
    set_name(call, name)
    set_arguments(call, arguments)
    return call


def _tool_call_from_dict(data: Any) -> ToolCall:
    if not isinstance(data, Mapping):
        raise InvalidRequest("a tool call must be an object")
    fn = data.get("function")
    source: Mapping[str, Any] = fn if isinstance(fn, Mapping) else data  # else the flat shape
    return ToolCall(
        id=data.get("id", ""),
        name=source.get("name", ""),
        arguments=arguments_text(source.get("arguments")),
    )


def arguments_text(value: Any) -> str:
    """Tool-call arguments as the JSON text the model sent (an object is serialized)."""
    return as_text(value, "tool call arguments", Mapping, _json, "an object")


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except RecursionError:  # nested past Python's own limit, let alone MAX_ARGUMENTS_DEPTH
        raise too_deep() from None


def as_text(
    value: Any, what: str, other: type, convert: Callable[[Any], str], other_name: str
) -> str:
    """``value`` as text: null is empty, a string is itself, an ``other`` is converted."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, other):
        return convert(value)
    raise InvalidRequest(
        f"{what} must be a string, null or {other_name}, got {type(value).__name__}"
    )


def block_type(block: Any) -> str:
    """The ``type`` of a content part (an OpenAI part, an Anthropic block)."""
    if not isinstance(block, Mapping):
        raise InvalidRequest(f"a content part must be an object, got {type(block).__name__}")
    kind = block.get("type")
    if not isinstance(kind, str):
        raise InvalidRequest("a content part needs a string 'type'")
    return kind


def part_text(block: Mapping[str, Any], kind: str) -> str:
    """A text part's text; any other part becomes a marker, so the summarizer knows something
    was there."""
    if kind not in _TEXT_PARTS:
        return "[image]" if kind in _IMAGE_PARTS else f"[{kind}]"
    text = block.get("text", "")
    if not isinstance(text, str):
        raise InvalidRequest(f"text part must hold a string, got {type(text).__name__}")
    return text


def parts_text(parts: list[Any]) -> str:
    return "\n".join(part_text(part, block_type(part)) for part in parts)


def optional_str(data: Mapping[str, Any], key: str) -> str | None:
    # Message does not type-check ids; a numeric one would leak back out to the provider.
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise InvalidRequest(f"{key} must be a string, got {type(value).__name__}")
    return value


def indexed(
    items: Iterable[Mapping[str, Any]], convert: Callable[[Mapping[str, Any]], list[Message]]
) -> list[Message]:
    """Apply ``convert`` to each item, prefixing any error with the item's index: a caller
    debugging a 400 on a 300-message request needs to know which one."""
    out: list[Message] = []
    for index, item in enumerate(items):
        try:
            if not isinstance(item, Mapping):
                raise InvalidRequest(f"a message must be an object, got {type(item).__name__}")
            out.extend(convert(item))
        except InvalidRequest as err:
            raise InvalidRequest(f"message {index}: {err.message}") from None
    return out


def messages_from_dicts(items: Iterable[Mapping[str, Any]]) -> list[Message]:
    """Parse a transcript; the error names the index of the first bad message."""
    return indexed(items, lambda item: [Message.from_dict(item)])


def is_real_user(message: Message) -> bool:
    """A user's own words: a user message that is not a compaction summary (tool results are
    ``tool`` messages)."""
    return message.role == "user" and not message.is_summary


#: How texts a client injects as user messages begin (docs/algorithm.md, "The user's own
#: words"): Claude Code's interruptions, slash-command wrappers, task notifications, skill
#: bodies, system reminders and its own continuation summary; Codex's AGENTS.md and environment.
#: Not the user's words: kept out of the verbatim section and the receipt's count.
INJECTED_PREFIXES = (
    "[Request interrupted by user",
    "<command-name>",
    "<command-message>",
    "<local-command-",
    "<task-notification>",
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions for ",
    "Base directory for this skill: ",
    "This session is being continued from a previous conversation",
    "Caveat: The messages below were generated by the user while running local commands",
)


#: Claude Code puts system reminders inside the user's own message too: taken off, not the rest.
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)


def own_words(message: Message) -> str:
    """What a person typed in ``message`` (stripped): "" for anything but a real user message
    (``is_real_user``) and for the texts a client injects in the user's role
    (``INJECTED_PREFIXES``, system reminders)."""
    if not is_real_user(message):
        return ""
    text = message.source_text
    if "<system-reminder>" in text:
        text = _REMINDER.sub("", text)
    text = text.strip()
    return "" if text.startswith(INJECTED_PREFIXES) else text


def is_own_words(message: Message) -> bool:
    return bool(own_words(message))


def last_real_user_index(messages: Sequence[Message]) -> int | None:
    """Index of the last user message that is not a compaction summary."""
    for index in range(len(messages) - 1, -1, -1):
        if is_real_user(messages[index]):
            return index
    return None
