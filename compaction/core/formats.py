"""Conversion between provider wire formats and :class:`Message` (OpenAI chat, Anthropic).

Pure functions, stdlib only: gateways call them at the edge so the core only sees ``Message``.
Every malformed input raises ``InvalidRequest`` naming the offending message index, because a
caller debugging a 400 on a 300-message request needs to know which one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, cast

from compaction.core.errors import InvalidRequest
from compaction.core.messages import (
    Message,
    Role,
    ToolCall,
    arguments_text,
    as_text,
    block_type,
    indexed,
    messages_from_dicts,
    optional_str,
    part_text,
    parts_text,
)


def from_openai(items: Iterable[Mapping[str, Any]]) -> list[Message]:
    """OpenAI chat-completions messages (or the project's flat tool-call shape) to messages:
    ``Message.from_dict`` on each, so both accept and refuse the same dicts."""
    return messages_from_dicts(items)


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
    content = as_text(block.get("content"), "tool_result content", list, parts_text, "a list")
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
        kind = block_type(block)
        if kind in ("thinking", "redacted_thinking"):
            continue  # signed reasoning: useless to a summary, and not ours to replay
        if kind == "tool_use":
            if role != "assistant":
                raise InvalidRequest("tool_use blocks belong in assistant messages")
            calls.append(
                ToolCall(
                    id=block.get("id", ""),
                    name=block.get("name", ""),
                    arguments=arguments_text(block.get("input", {})),
                )
            )
        elif kind == "tool_result":
            if role != "user":
                raise InvalidRequest("tool_result blocks belong in user messages")
            results.append(
                Message(
                    role="tool",
                    content=_tool_result_content(block),
                    tool_call_id=optional_str(block, "tool_use_id"),
                )
            )
        else:
            texts.append(part_text(block, kind))
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
            system = parts_text(system)
        except InvalidRequest as err:
            raise InvalidRequest(f"system: {err.message}") from None
    elif system is not None and not isinstance(system, str):
        raise InvalidRequest(
            f"system must be a string or list of blocks, got {type(system).__name__}"
        )
    if system:
        head.append(Message(role="system", content=system))
    return head + indexed(messages, _from_anthropic_one)


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
