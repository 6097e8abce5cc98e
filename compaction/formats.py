"""Conversion between provider wire formats and :class:`Message` (OpenAI chat, Anthropic).

Pure functions, stdlib only: gateways call them at the edge so the core only sees ``Message``.
Every malformed input raises ``InvalidRequest`` naming the offending message index, because a
caller debugging a 400 on a 300-message request needs to know which one.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, cast

from compaction.errors import InvalidRequest
from compaction.messages import Message, Role, ToolCall

_OPENAI_ROLES: dict[str, Role] = {
    "system": "system",
    "developer": "system",  # o-series name for the system prompt; same meaning to us
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
}
# Responses-API part names are accepted too: some SDKs mix them into chat requests.
_TEXT_PARTS = frozenset({"text", "input_text", "output_text"})
_IMAGE_PARTS = frozenset({"image_url", "input_image", "image"})


def _indexed(
    items: Iterable[Mapping[str, Any]], convert: Callable[[Mapping[str, Any]], list[Message]]
) -> list[Message]:
    """Apply ``convert`` to each item, prefixing any error with the item's index."""
    out: list[Message] = []
    for index, item in enumerate(items):
        try:
            if not isinstance(item, Mapping):
                raise InvalidRequest(f"a message must be an object, got {type(item).__name__}")
            out.extend(convert(item))
        except InvalidRequest as err:
            raise InvalidRequest(f"message {index}: {err.message}") from None
    return out


def _block_type(block: Any) -> str:
    if not isinstance(block, Mapping):
        raise InvalidRequest(f"a content part must be an object, got {type(block).__name__}")
    kind = block.get("type")
    if not isinstance(kind, str):
        raise InvalidRequest("a content part needs a string 'type'")
    return kind


def _part_text(block: Mapping[str, Any], kind: str) -> str:
    if kind not in _TEXT_PARTS:  # a marker, so the summarizer knows something was there
        return "[image]" if kind in _IMAGE_PARTS else f"[{kind}]"
    text = block.get("text", "")
    if not isinstance(text, str):
        raise InvalidRequest(f"text part must hold a string, got {type(text).__name__}")
    return text


def _arguments(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return json.dumps(value, ensure_ascii=False)
    raise InvalidRequest(
        f"tool call arguments must be a string or object, got {type(value).__name__}"
    )


def _optional_str(data: Mapping[str, Any], key: str) -> str | None:
    # Message does not type-check ids; a numeric one would leak back out to the provider.
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise InvalidRequest(f"{key} must be a string, got {type(value).__name__}")
    return value


def _openai_content(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_part_text(part, _block_type(part)) for part in content)
    raise InvalidRequest(
        f"content must be a string, null or a list of parts, got {type(content).__name__}"
    )


def _openai_tool_call(data: Any) -> ToolCall:
    if not isinstance(data, Mapping):
        raise InvalidRequest("a tool call must be an object")
    fn = data.get("function")
    source: Mapping[str, Any] = fn if isinstance(fn, Mapping) else data  # else the flat shape
    return ToolCall(
        id=data.get("id", ""),
        name=source.get("name", ""),
        arguments=_arguments(source.get("arguments")),
    )


def _from_openai_one(item: Mapping[str, Any]) -> list[Message]:
    role = item.get("role")
    if not isinstance(role, str) or role not in _OPENAI_ROLES:
        raise InvalidRequest(f"unknown role {role!r}; expected one of {sorted(_OPENAI_ROLES)}")
    calls = item.get("tool_calls")
    if calls is None:
        calls = []
    elif not isinstance(calls, list):
        raise InvalidRequest("tool_calls must be a list")
    raw_id = item.get("id")
    return [
        Message(
            role=_OPENAI_ROLES[role],
            content=_openai_content(item.get("content")),
            tool_calls=[_openai_tool_call(c) for c in calls],
            tool_call_id=_optional_str(item, "tool_call_id"),
            # bool is an int subclass; a True id is certainly not ours
            id=raw_id if isinstance(raw_id, int) and not isinstance(raw_id, bool) else None,
        )
    ]


def from_openai(items: Iterable[Mapping[str, Any]]) -> list[Message]:
    """OpenAI chat-completions messages (or the project's flat tool-call shape) to messages."""
    return _indexed(items, _from_openai_one)


def to_openai(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """Messages to OpenAI chat-completions dicts; ids and originals stay internal."""
    out: list[dict[str, Any]] = []
    for m in messages:
        entry: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.tool_calls:
            # OpenAI's own responses use null, not "", for a tool-call-only assistant turn
            entry["content"] = m.content or None
            entry["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in m.tool_calls
            ]
        if m.role == "tool":
            entry["tool_call_id"] = m.tool_call_id
        out.append(entry)
    return out


def _tool_result_content(block: Mapping[str, Any]) -> str:
    content = block.get("content")
    if content is None:
        content = ""
    elif isinstance(content, list):
        content = "\n".join(_part_text(part, _block_type(part)) for part in content)
    elif not isinstance(content, str):
        raise InvalidRequest(
            f"tool_result content must be a string or list, got {type(content).__name__}"
        )
    return "[error] " + content if block.get("is_error") else content


def _from_anthropic_one(item: Mapping[str, Any]) -> list[Message]:
    role = item.get("role")
    if role not in ("user", "assistant"):
        raise InvalidRequest(f"unknown role {role!r}; expected 'user' or 'assistant'")
    content = item.get("content", "")
    if isinstance(content, str):
        return [Message(role=cast(Role, role), content=content)]
    if not isinstance(content, list):
        raise InvalidRequest(
            f"content must be a string or a list of blocks, got {type(content).__name__}"
        )
    texts: list[str] = []
    calls: list[ToolCall] = []
    results: list[Message] = []
    for block in content:
        kind = _block_type(block)
        if kind in ("thinking", "redacted_thinking"):
            continue  # signed reasoning: useless to a summary, and not ours to replay
        if kind == "tool_use":
            if role != "assistant":
                raise InvalidRequest("tool_use blocks belong in assistant messages")
            calls.append(
                ToolCall(
                    id=block.get("id", ""),
                    name=block.get("name", ""),
                    arguments=_arguments(block.get("input", {})),
                )
            )
        elif kind == "tool_result":
            if role != "user":
                raise InvalidRequest("tool_result blocks belong in user messages")
            results.append(
                Message(
                    role="tool",
                    content=_tool_result_content(block),
                    tool_call_id=_optional_str(block, "tool_use_id"),
                )
            )
        else:
            texts.append(_part_text(block, kind))
    text = "\n".join(texts)
    if role == "assistant":
        return [Message(role="assistant", content=text, tool_calls=calls)]
    # Tool results answer the previous turn, so they come before any new user text.
    if results and not text:
        return results
    return [*results, Message(role="user", content=text)]


def from_anthropic(
    messages: Iterable[Mapping[str, Any]],
    system: str | list[Mapping[str, Any]] | None = None,
) -> list[Message]:
    """Anthropic Messages API ``messages`` (+ top-level ``system``) to messages."""
    head: list[Message] = []
    if isinstance(system, list):
        try:
            system = "\n".join(_part_text(b, _block_type(b)) for b in system)
        except InvalidRequest as err:
            raise InvalidRequest(f"system: {err.message}") from None
    elif system is not None and not isinstance(system, str):
        raise InvalidRequest(
            f"system must be a string or list of blocks, got {type(system).__name__}"
        )
    if system:
        head.append(Message(role="system", content=system))
    return head + _indexed(messages, _from_anthropic_one)


def _tool_input(arguments: str) -> dict[str, Any]:
    if not arguments:
        return {}
    try:
        value = json.loads(arguments)
    except ValueError:
        value = None
    # Anthropic insists on an object; keep anything else verbatim rather than drop it.
    return value if isinstance(value, dict) else {"_raw": arguments}


def to_anthropic(messages: Iterable[Message]) -> tuple[str | None, list[dict[str, Any]]]:
    """Messages to Anthropic ``(system, messages)``.

    Anthropic has no tool role: results travel as ``tool_result`` blocks of a user message,
    all results of one turn in one message, and user text right after them joins that message.
    """
    system: list[str] = []
    out: list[dict[str, Any]] = []
    open_results: list[dict[str, Any]] | None = None  # block list still accepting tool results
    for m in messages:
        if m.role == "system":
            system.append(m.content)  # hoisted; does not break a run of tool results
            continue
        if m.role == "tool":
            if open_results is None:
                open_results = []
                out.append({"role": "user", "content": open_results})
            open_results.append(
                {"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.content}
            )
            continue
        if m.role == "user" and open_results is not None:
            if m.content:  # Anthropic rejects empty text blocks
                open_results.append({"type": "text", "text": m.content})
        elif m.role == "user":
            out.append({"role": "user", "content": m.content})
        else:
            blocks: list[dict[str, Any]] = []
            if m.content:
                blocks.append({"type": "text", "text": m.content})
            blocks.extend(
                {"type": "tool_use", "id": c.id, "name": c.name, "input": _tool_input(c.arguments)}
                for c in m.tool_calls
            )
            out.append({"role": "assistant", "content": blocks})
        open_results = None
    return ("\n\n".join(system) if system else None), out
