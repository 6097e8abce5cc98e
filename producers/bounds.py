"""The one bound on what is written (docs/algorithm.md, "Bounds"): a message alone at or over its
session's compaction threshold is refused where it is written, before anything is stored.

No compaction can make room for such a message (it is kept whole while it is the latest), so
every later turn would send a context over the threshold (the seed's "整体小但单条超长":
"suggest splitting it"). Every way in calls ``refuse_oversized``: a gateway's turn (HTTP and the
socket: ``gateway/chat.py``), ``Producers.append_messages``, and ``store_transcript`` (the HTTP
and command-line imports, which name the message by its index). The refusal is
``message_too_large`` in the language of the message (``summary_language``).
"""

from __future__ import annotations

from collections.abc import Sequence

from compaction.core.boundaries import token_counts
from compaction.core.errors import MessageTooLarge
from compaction.core.messages import Message
from compaction.core.prompts import summary_language
from compaction.service.context import SessionContext, resolve_context
from compaction.service.settings import Settings
from compaction.store import SessionInfo, Store


def refuse_oversized(
    settings: Settings,
    context: SessionContext,
    messages: Sequence[Message],
    *,
    indexed: bool = False,
) -> None:
    """``MessageTooLarge`` for the first of ``messages`` alone at or over the session's
    threshold; ``indexed`` names it by its index in ``messages`` (a transcript)."""
    config = context.config(settings)
    threshold = config.threshold_tokens
    for index, tokens in enumerate(token_counts(messages, config)):
        if tokens >= threshold:
            language = summary_language(config.summary_language, [messages[index]])
            raise MessageTooLarge(_advice(language, index if indexed else None, tokens, threshold))


def context_for(
    settings: Settings,
    store: Store,
    session_id: str | None,
    *,
    agent_id: str | None = None,
    model: str | None = None,
) -> SessionContext:
    """The context of the stored session ``session_id``, or (``None``) of the session about to
    be created with ``agent_id`` and ``model``: the same rule, ``resolve_context``."""
    if session_id is not None:
        info = store.get_session(session_id)
    else:
        info = SessionInfo("", agent_id, model, 0, 0)
    agent = store.get_agent(info.agent_id) if info.agent_id is not None else None
    return resolve_context(settings, info, agent)


def _advice(language: str, index: int | None, tokens: int, threshold: int) -> str:
    if language == "zh":
        which = f"消息 {index} " if index is not None else "这条消息"
        return (
            f"{which}约 {tokens:,} tokens，超过本会话的压缩阈值 {threshold:,} tokens，"
            "压缩也无法为它腾出空间：建议拆分成几条较短的消息再发送"
        )
    which = f"message {index} is" if index is not None else "this message is"
    return (
        f"{which} ~{tokens:,} tokens, over this session's compaction threshold of "
        f"{threshold:,}: no compaction can make room for it; split it into shorter messages"
    )
