"""The message model shared by every layer (DESIGN §3).

Plain slotted dataclasses rather than pydantic models: the core builds hundreds of thousands of
them per second in the benchmarks, and validation happens once, at construction.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Literal, cast

from compaction.errors import InvalidRequest

Role = Literal["system", "user", "assistant", "tool"]
ROLES: frozenset[str] = frozenset({"system", "user", "assistant", "tool"})

#: Every summary message starts with this marker (seed §3, phase 3); it is how a summary is
#: recognised in a list that came back from storage or from a gateway.
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
    """

    role: Role
    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None
    id: int | None = None
    original_content: str | None = None

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

    @classmethod
    def from_trusted(
        cls,
        role: Role,
        content: str,
        tool_calls: list[ToolCall],
        tool_call_id: str | None,
        id: int | None,
        original_content: str | None = None,
    ) -> Message:
        """Build without the checks, for rows the database already constrains (role, text
        content): twice as fast, which counts when loading 10,000 messages."""
        message = object.__new__(cls)
        # The slots' own setters (frozen: ``__init__`` goes through object.__setattr__, which
        # looks each name up first).
        set_role, set_content, set_calls, set_call_id, set_id, set_original = _MESSAGE_SETTERS
        set_role(message, role)
        set_content(message, content)
        set_calls(message, tool_calls)
        set_call_id(message, tool_call_id)
        set_id(message, id)
        set_original(message, original_content)
        return message

    @property
    def is_summary(self) -> bool:
        return self.role == "user" and self.content.startswith(SUMMARY_MARKER)

    @property
    def source_text(self) -> str:
        """What the message really said: the original of a placeholder, else the content."""
        return self.content if self.original_content is None else self.original_content

    def with_content(self, content: str, *, original: str | None = None) -> Message:
        if not isinstance(content, str):
            raise InvalidRequest(f"message content must be a string, got {type(content).__name__}")
        # Only the content changes, and this message passed the checks already.
        return Message.from_trusted(
            self.role, content, self.tool_calls, self.tool_call_id, self.id, original
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
        if not isinstance(data, Mapping):
            raise InvalidRequest(f"a message must be an object, got {type(data).__name__}")
        calls = data.get("tool_calls") or []
        if not isinstance(calls, list):
            raise InvalidRequest("tool_calls must be a list")
        return cls(
            role=cast(Role, data.get("role")),
            content=data.get("content", ""),
            tool_calls=[_tool_call_from_dict(c) for c in calls],
            tool_call_id=data.get("tool_call_id"),
            id=data.get("id"),
        )


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
    if isinstance(fn, Mapping):  # OpenAI shape
        return ToolCall(
            id=data.get("id", ""), name=fn.get("name", ""), arguments=fn.get("arguments") or ""
        )
    return ToolCall(
        id=data.get("id", ""), name=data.get("name", ""), arguments=data.get("arguments") or ""
    )


def messages_from_dicts(items: Iterable[Mapping[str, Any]]) -> list[Message]:
    """Parse a transcript; the error names the index of the first bad message."""
    out: list[Message] = []
    for index, item in enumerate(items):
        try:
            out.append(Message.from_dict(item))
        except InvalidRequest as err:
            raise InvalidRequest(f"message {index}: {err.message}") from None
    return out


def last_real_user_index(messages: Sequence[Message]) -> int | None:
    """Index of the last user message that is not a compaction summary."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role == "user" and not message.is_summary:
            return index
    return None
