"""Context compaction for LLM agents: one installed name (docs/architecture.md, "Layers").

The pure core lives in ``compaction.core``; its public names are re-exported here, where users
import them (``from compaction import Message, compact``): one list, the core's ``__all__``. The
layers above it install as ``compaction.store``, ``.service``, ``.worker``, ``.producers``,
``.gateway``, ``.cli``, ``.migrations``, ``.embedded`` and ``.testing``.
"""

from importlib.metadata import PackageNotFoundError, version

from compaction import core
from compaction.core import *  # noqa: F403

try:
    __version__ = version("compaction")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"

__all__ = ["__version__"]
__all__ += core.__all__
