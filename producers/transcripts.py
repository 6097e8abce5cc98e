"""Storing a transcript, one set of rules for ``compaction import`` and the gateway's import
(docs/architecture.md, "Tables"): an OpenAI-format list of messages, checked with the turn it
continues, stored whole or not at all."""

from __future__ import annotations

from collections.abc import Sequence

from compaction.core.contract import NAME_MAX_CHARS, NAME_RULE, valid_name
from compaction.core.errors import InvalidRequest
from compaction.core.formats import from_openai
from compaction.core.messages import Message
from compaction.core.validate import problems
from compaction.producers.bounds import context_for, refuse_oversized
from compaction.service.settings import Settings
from compaction.store import Store, StoredMessage


def parse_transcript(raw: object, source: str) -> list[Message]:
    """Decoded JSON as messages; ``source`` names it in the refusal (a file, "the body")."""
    if not isinstance(raw, list):
        raise InvalidRequest(
            f"{source} must hold a JSON list of messages, not a {type(raw).__name__}"
        )
    return from_openai(raw)


def title_of(file_name: str) -> str:
    """A transcript file's name as its session's title: without its folder and ``.json``, cut
    to the name rule's length and its control characters dropped (docs/architecture.md,
    "Session titles")."""
    stem = file_name.replace("\\", "/").rsplit("/", 1)[-1]
    if stem.lower().endswith(".json") and len(stem) > len(".json"):
        stem = stem[: -len(".json")]
    cleaned = "".join(c for c in stem if c.isprintable()).strip()
    return cleaned[:NAME_MAX_CHARS] or "transcript"


def _open_turn(view: Sequence[StoredMessage]) -> list[Message]:
    """The stored turn that new messages may continue: the last assistant call still waiting
    for results, with the results it has."""
    for index in range(len(view) - 1, -1, -1):
        message = view[index].message
        if message.role != "tool":
            return [s.message for s in view[index:]] if message.tool_calls else []
    return []


def store_transcript(
    store: Store,
    settings: Settings,
    messages: Sequence[Message],
    *,
    session_id: str | None = None,
    agent_id: str | None = None,
    model: str | None = None,
    append: bool = True,
    source: str = "the transcript",
    title: str | None = None,
) -> str:
    """Append ``messages`` to the session, or create it (with its agent, blank settings, if
    missing) holding them; returns its id. ``append=False`` only creates: an existing session
    is a ``Conflict``. Messages that would not make a valid conversation after the stored turn
    they continue are refused, and so is a message alone over the session's threshold
    (``bounds.refuse_oversized``, naming its index): nothing is stored. ``title`` names a new
    session, or renames the one appended to."""
    if title is not None and not valid_name(title):  # before anything is stored
        raise InvalidRequest(f"title: {NAME_RULE}")
    exists = append and session_id is not None and store.session_exists(session_id)
    context = _open_turn(store.load_history(session_id)) if session_id and exists else []
    broken = problems([*context, *messages], provider="openai")
    if broken:
        more = f" (and {len(broken) - 1} more)" if len(broken) > 1 else ""
        raise InvalidRequest(f"{source}: {broken[0]}{more}; nothing stored")
    stored = session_id if exists else None
    session = context_for(settings, store, stored, agent_id=agent_id, model=model)
    refuse_oversized(settings, session, messages, indexed=True)
    if session_id is not None and exists:
        store.append_messages(session_id, list(messages))
        if title is not None:
            store.rename_session(session_id, title)
        return session_id
    # the session, its agent and its rows in one transaction: a refusal stores nothing
    return store.create_session(
        session_id,
        agent_id=agent_id,
        model=model,
        messages=list(messages),
        add_missing_agent=True,
        title=title,
    )
