"""``Store``: the typed repository, built from the sessionmaker it is given."""

from __future__ import annotations

from store.channels import Channels
from store.compactions import Compactions
from store.history import History
from store.runs import Runs
from store.sessions import Sessions


class Store(Sessions, History, Compactions, Runs, Channels):
    """Sessions and messages, the history views, compaction write-back and restore, channels
    and agent settings; every method opens and closes its own short transaction."""
