"""The reference gateway and its console (docs/architecture.md, "The gateway"): an ASGI app
(FastAPI, served by uvicorn) with the HTTP API, a WebSocket and SSE per session, and the static
console. It sits above the producers (and, embedded, an in-process worker): one of many
stateless gateway processes in front of real workers, or the whole product in one process.
"""

from compaction.gateway.app import create_app
from compaction.gateway.resources import Resources

__all__ = ["Resources", "create_app"]
