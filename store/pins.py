"""Pinning and unpinning a message (docs/architecture.md, "Pins"): one short transaction that
locks the session, checks the message can be pinned, sets ``message.pinned``, asks the caller's
check of the compacted view it would leave (``compaction.core.pins.check_pins`` at the
session's threshold: the producers pass it), and bumps the session's compaction version, so that
a run that read the history before the pin writes nothing (``lock_lost``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sqlalchemy import select

from compaction.core.errors import InvalidRequest, NotFound, SessionNotFound
from compaction.core.messages import Message
from compaction.store.db import Repository, write_session
from compaction.store.history import read_view
from compaction.store.models import ChatSession
from compaction.store.models import Message as MessageRow
from compaction.store.records import EVENT_TYPE

#: what a pin checks before it is written: raises to refuse (nothing changes)
PinCheck = Callable[[Sequence[Message]], None]


@dataclass(frozen=True, slots=True)
class PinChange:
    message_id: int
    pinned: bool
    #: ``False`` when the message already was so (nothing written)
    changed: bool


class Pins(Repository):
    def set_pinned(
        self, session_id: str, message_id: int, pinned: bool, check: PinCheck | None = None
    ) -> PinChange:
        """Pin (``pinned=True``) or unpin a visible message of ``session_id``; ``check`` is
        given the compacted view with the pin set (pinning only) and refuses by raising.
        Unknown ids are ``NotFound``; a summary, an event row or a message folded into a
        summary is ``InvalidRequest``."""
        with write_session(self.factory) as session:
            chat = session.scalar(
                select(ChatSession).where(ChatSession.id == session_id).with_for_update()
            )
            if chat is None:
                raise SessionNotFound(f"session {session_id!r} not found")
            row = session.get(MessageRow, message_id)
            if row is None or row.session_id != session_id:
                raise NotFound(f"message {message_id} not found in session {session_id!r}")
            if pinned:
                _refuse_unpinnable(row)
            if row.pinned == pinned:
                return PinChange(message_id, pinned, changed=False)
            row.pinned = pinned
            session.flush()
            if pinned and check is not None:
                check([stored.message for stored in read_view(session, session_id)])
            chat.compaction_version += 1  # a worker holding the old version must not write
            return PinChange(message_id, pinned, changed=True)


def _refuse_unpinnable(row: MessageRow) -> None:
    what = f"message {row.id}"
    if row.meta and row.meta.get("systemType") == EVENT_TYPE:
        raise InvalidRequest(f"{what} is a compaction event, not a message: it cannot be pinned")
    if row.is_compaction_summary:
        raise InvalidRequest(
            f"{what} is a compaction summary: pin the messages it replaced instead (restore "
            "the compaction first)"
        )
    if row.compacted_at is not None:
        raise InvalidRequest(
            f"{what} is folded into summary {row.compacted_into_id}: restore that compaction "
            "to pin it"
        )
